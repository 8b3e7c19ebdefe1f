/**
 * Every layer of a workspace, whatever its service (listWorkspaceLayers, ADR 0130): a paged table
 * of layers with their service, searchable by name. The search is the API's `q` (public id or
 * title, any case); a searched page reads a bounded slice of the workspace's layers, so it may come
 * back short or empty with a next page to read on.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { PagedTable, SearchedSection, usePagedList } from '#console/components/lists.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { formatCount } from '#console/format.ts';
import { paths } from '#console/routes.ts';
import './services.css';

export function WorkspaceLayersPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const [search, setSearch] = useState('');
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/layers', {
          params: { path: { workspace }, query: { limit: 50, ...page, ...(search ? { q: search } : {}) } },
        }),
      ),
    [workspace, search],
  );
  return (
    <>
      <PageTitle title={`Layers · ${workspace}`}>Layers in {workspace}</PageTitle>
      <p>
        Every layer of every service of the workspace. To publish one, open its service:{' '}
        <a href={paths.services(workspace)}>Services of {workspace}</a>.
      </p>
      <SearchedSection
        id="layers-heading"
        noun="Layers"
        label="Search by name"
        hint="Part of a layer's public id or title, in any case."
        search={search}
        setSearch={setSearch}
        list={list}
      >
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.layers}
          columns={['Layer', 'Title', 'Service', 'Geometry', 'State', 'Access']}
          caption={(data) =>
            `${formatCount(data.layers.length)} layer${data.layers.length === 1 ? '' : 's'} on this page${data.next_cursor ? '; more on the next' : ''}`
          }
          empty={
            list.data?.next_cursor ? (
              <p>No match among the layers read for this page; the next page reads on.</p>
            ) : (
              <p>{search ? `No layer matches “${search}”.` : 'No layers in this workspace yet.'}</p>
            )
          }
        >
          {(layer) => (
            <tr key={layer.id}>
              <td>
                <a href={paths.layer(workspace, layer.service_name, layer.id)}>{layer.public_id}</a>
              </td>
              <td>{layer.title}</td>
              <td>
                <a href={paths.layers(workspace, layer.service_name)}>{layer.service_name}</a>
              </td>
              <td>{layer.geometry_type ?? '—'}</td>
              <td>{layer.enabled ? 'Enabled' : 'Draft (disabled)'}</td>
              <td>{layer.public ? 'Public' : 'Restricted'}</td>
            </tr>
          )}
        </PagedTable>
      </SearchedSection>
    </>
  );
}
