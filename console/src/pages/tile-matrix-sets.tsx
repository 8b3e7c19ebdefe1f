/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function TileMatrixSetsPage() {
  return <PageTitle title="TileMatrixSetsPage">TileMatrixSetsPage</PageTitle>;
}
