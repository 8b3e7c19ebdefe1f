/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function ApiKeysPage() {
  return <PageTitle title="ApiKeysPage">ApiKeysPage</PageTitle>;
}
