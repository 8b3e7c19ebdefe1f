/** PLACEHOLDER — replaced by the page's implementation. */
import { PageTitle } from '../components.tsx';

export function SettingsPage() {
  return <PageTitle title="SettingsPage">SettingsPage</PageTitle>;
}
