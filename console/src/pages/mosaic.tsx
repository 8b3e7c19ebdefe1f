/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function MosaicPage() {
  return <PageTitle title="MosaicPage">MosaicPage</PageTitle>;
}
