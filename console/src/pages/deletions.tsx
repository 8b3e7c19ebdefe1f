/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function DeletionsPage() {
  return <PageTitle title="DeletionsPage">DeletionsPage</PageTitle>;
}

export function DeletionPage() {
  return <PageTitle title="DeletionPage">DeletionPage</PageTitle>;
}
