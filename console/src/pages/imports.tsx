/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function ImportsPage() {
  return <PageTitle title="ImportsPage">ImportsPage</PageTitle>;
}

export function ImportPage() {
  return <PageTitle title="ImportPage">ImportPage</PageTitle>;
}
