/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function ServicesPage() {
  return <PageTitle title="ServicesPage">ServicesPage</PageTitle>;
}

export function ServicePage() {
  return <PageTitle title="ServicePage">ServicePage</PageTitle>;
}
