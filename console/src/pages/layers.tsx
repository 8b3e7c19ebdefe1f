/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function LayersPage() {
  return <PageTitle title="LayersPage">LayersPage</PageTitle>;
}

export function LayerPage() {
  return <PageTitle title="LayerPage">LayerPage</PageTitle>;
}
