/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function AuditPage() {
  return <PageTitle title="AuditPage">AuditPage</PageTitle>;
}
