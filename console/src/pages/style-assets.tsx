/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function StyleAssetsPage() {
  return <PageTitle title="StyleAssetsPage">StyleAssetsPage</PageTitle>;
}
