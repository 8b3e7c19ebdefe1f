/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function RolesPage() {
  return <PageTitle title="RolesPage">RolesPage</PageTitle>;
}
