/**
 * Styles of a workspace: the paged list, creating one (SLD 1.0/1.1, SE 1.1 or MapLibre JSON, typed
 * or loaded from a file), and — with `?style=<name>` — one style to edit (If-Match) or delete.
 * The API validates every body; its refusal (the MapLibre validator's messages, an XML parse
 * error) is shown beside the editor.
 */
import './styles.css';
import { useLocation, useRoute } from 'preact-iso';
import { PageTitle } from '#console/components/page-parts.tsx';
import { CreateStyle } from './styles/create-style.tsx';
import { OneStyle } from './styles/one-style.tsx';
import { StyleList } from './styles/style-list.tsx';

export function StylesPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const workspace = params.workspace as string;
  const selected = query.style;
  if (selected) return <OneStyle key={`${workspace}/${selected}`} workspace={workspace} name={selected} />;
  return (
    <>
      <PageTitle title={`Styles · ${workspace}`}>Styles of {workspace}</PageTitle>
      <StyleList workspace={workspace} />
      <CreateStyle workspace={workspace} />
    </>
  );
}
