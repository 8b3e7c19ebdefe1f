/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function ClaimMappingsPage() {
  return <PageTitle title="ClaimMappingsPage">ClaimMappingsPage</PageTitle>;
}
