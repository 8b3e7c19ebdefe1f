/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function StylesPage() {
  return <PageTitle title="StylesPage">StylesPage</PageTitle>;
}
