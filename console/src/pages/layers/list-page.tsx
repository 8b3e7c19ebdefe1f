/**
 * The layers of a service: the paged list with a search, enabling or disabling a layer (If-Match),
 * deleting one.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call, etag } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { useConfirmed } from '#console/components/dialogs.tsx';
import { Notice } from '#console/components/forms.tsx';
import { PagedTable, RowError, SearchedSection, usePagedList } from '#console/components/lists.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { DeleteLayerConfirm, deleteLayer, type Layer, sourceOf, stateOf } from './layer-parts.tsx';

/** Pages read for a search (listLayers has no filter, so the console reads them and filters here). */
const SEARCH_PAGES = 20;

function matches(layer: Layer, text: string): boolean {
  const needle = text.trim().toLowerCase();
  return [layer.public_id, layer.title, layer.source_layer, layer.description ?? '', layer.id].some((value) =>
    value.toLowerCase().includes(needle),
  );
}

/** Enables or disables a layer: PUT with only `enabled` (omitted fields keep their values). */
function setEnabled(workspace: string, service: string, layer: Layer, enabled: boolean) {
  return call(
    api.PUT('/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}', {
      params: { path: { workspace, service, layer: layer.id }, header: { 'If-Match': etag(layer.version) } },
      body: { enabled },
    }),
  );
}

function LayerRow({
  workspace,
  service,
  initial,
  onDelete,
  deleteError,
}: {
  workspace: string;
  service: string;
  initial: Layer;
  onDelete: (layer: Layer) => void;
  deleteError: unknown;
}) {
  const [layer, setLayer] = useState(initial);
  const toggle = useAction(async () => setLayer(await setEnabled(workspace, service, layer, !layer.enabled)));
  const error = toggle.error ?? deleteError;
  return (
    <>
      <tr>
        <td>
          <a href={paths.layer(workspace, service, layer.id)}>{layer.public_id}</a>
        </td>
        <td>{layer.title}</td>
        <td>{sourceOf(layer)}</td>
        <td>{layer.geometry_type ?? '—'}</td>
        <td>{stateOf(layer)}</td>
        <td>{layer.public ? 'Public' : 'Restricted'}</td>
        <td>
          <div class="row">
            <button
              type="button"
              disabled={toggle.busy}
              aria-label={`${layer.enabled ? 'Disable' : 'Enable'} ${layer.public_id}`}
              onClick={() => void toggle.run()}
            >
              {layer.enabled ? 'Disable' : 'Enable'}
            </button>
            <button
              type="button"
              class="danger"
              aria-label={`Delete ${layer.public_id}`}
              onClick={() => onDelete(layer)}
            >
              Delete
            </button>
          </div>
        </td>
      </tr>
      <RowError error={error} colSpan={7} />
    </>
  );
}

export function LayersPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const service = params.service as string;
  const [search, setSearch] = useState('');
  const list = usePagedList(
    async (page) => {
      if (search) {
        const found: Layer[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const result = await call(
            api.GET('/api/v1/workspaces/{workspace}/services/{service}/layers', {
              params: { path: { workspace, service }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
            }),
          );
          found.push(...result.layers.filter((layer) => matches(layer, search)));
          cursor = result.next_cursor;
          pages++;
        } while (cursor && pages < SEARCH_PAGES);
        return { layers: found, next_cursor: undefined, incomplete: cursor !== undefined };
      }
      const result = await call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/layers', {
          params: {
            path: { workspace, service },
            query: { limit: 50, ...page },
          },
        }),
      );
      return { ...result, incomplete: false };
    },
    [workspace, service, search],
  );
  const [deleted, setDeleted] = useState<string>();
  const [deleteErrors, setDeleteErrors] = useState<Record<string, unknown>>({});
  const remove = useConfirmed(async (layer: Layer) => {
    setDeleted(undefined);
    try {
      await deleteLayer(workspace, service, layer);
      setDeleted(`Deleted ${layer.public_id}.`);
      await list.reload();
    } catch (error) {
      setDeleteErrors((errors) => ({ ...errors, [layer.id]: error }));
    }
  });

  return (
    <>
      <PageTitle title={`Layers of ${service}`}>Layers of {service}</PageTitle>
      <p>
        <a href={paths.service(workspace, service)}>Service {service}</a> (discover its tables and publish
        them, or publish an SQL view) · <a href={paths.services(workspace)}>Services of {workspace}</a>
      </p>
      <SearchedSection
        id="layers-heading"
        noun="Layers"
        label="Search layers"
        hint="Public id, title or source table. The API has no search filter: the console reads the service's layers and filters them here."
        search={search}
        setSearch={setSearch}
        list={list}
      >
        <Notice>{deleted}</Notice>
        <PagedTable
          state={list}
          pager={search ? null : list.pager}
          items={(data) => data.layers}
          columns={['Public id', 'Title', 'Source', 'Geometry', 'State', 'Access', 'Actions']}
          empty={<p role="status">{search ? 'No layer matches.' : 'No layers yet.'}</p>}
          after={(data) => (
            <>
              {data.incomplete ? (
                <p>The search stopped after {SEARCH_PAGES * 1000} layers; narrow it down.</p>
              ) : null}
            </>
          )}
        >
          {(layer) => (
            <LayerRow
              key={`${layer.id}:${layer.version}`}
              workspace={workspace}
              service={service}
              initial={layer}
              onDelete={remove.ask}
              deleteError={deleteErrors[layer.id]}
            />
          )}
        </PagedTable>
      </SearchedSection>
      <DeleteLayerConfirm dialog={remove.dialog} name={remove.asking?.public_id ?? ''} />
    </>
  );
}
