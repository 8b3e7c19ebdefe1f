/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function LayerGroupsPage() {
  return <PageTitle title="LayerGroupsPage">LayerGroupsPage</PageTitle>;
}
