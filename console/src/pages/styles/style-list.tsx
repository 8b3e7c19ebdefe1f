/** The paged list of a workspace's styles. */
import { api, call } from '#console/api.ts';
import { PagedSection, usePagedList } from '#console/components/lists.tsx';
import { When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { formatLabel } from './style-fields.tsx';

export function StyleList({ workspace }: { workspace: string }) {
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/styles', {
          params: { path: { workspace }, query: { limit: 50, ...page } },
        }),
      ),
    [workspace],
  );
  return (
    <PagedSection
      id="list-heading"
      heading="Styles"
      list={list}
      items={(data) => data.styles}
      columns={['Name', 'Format', 'Title', 'Assets used', 'Version', 'Updated']}
      empty={<p>No styles yet.</p>}
    >
      {(s) => (
        <tr key={s.id}>
          <td>
            <a href={`${paths.styles(workspace)}?style=${encodeURIComponent(s.name)}`}>{s.name}</a>
          </td>
          <td>{formatLabel(s.format)}</td>
          <td>{s.title ?? ''}</td>
          <td>{s.asset_refs.length ? s.asset_refs.join(', ') : '—'}</td>
          <td>{s.version}</td>
          <td>
            <When at={s.updated_at} />
          </td>
        </tr>
      )}
    </PagedSection>
  );
}
