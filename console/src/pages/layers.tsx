/**
 * Layers of a service: the paged list with a search, enabling or disabling a layer (If-Match),
 * deleting one. One layer: its fields, a map of it drawn from its own vector tiles, its OGC API
 * URLs, an edit form, delete.
 */
import { useId, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, call, etag, type Schemas } from '../api.ts';
import { useAction, useLoad } from '../components/data.tsx';
import { Confirm, DeleteSection, useConfirmed } from '../components/dialogs.tsx';
import { ErrorNote, Field, issueFor, Notice, SaveActions, SearchForm } from '../components/forms.tsx';
import { PagedTable, RowError, usePagedList } from '../components/lists.tsx';
import { PageTitle, When } from '../components/page-parts.tsx';
import { paths } from '../routes.ts';
import { LayerMap } from './map-preview.tsx';
import { LayerOgcLinks } from './ogc-links.tsx';
import './services.css';

type Layer = Schemas['Layer'];

/** Pages read for a search (listLayers has no filter, so the console reads them and filters here). */
const SEARCH_PAGES = 20;

function matches(layer: Layer, text: string): boolean {
  const needle = text.trim().toLowerCase();
  return [layer.public_id, layer.title, layer.source_layer, layer.description ?? '', layer.id].some((value) =>
    value.toLowerCase().includes(needle),
  );
}

function sourceOf(layer: Layer) {
  return layer.is_sql_view ? <span>SQL view</span> : <code>{layer.source_layer}</code>;
}

function stateOf(layer: Layer): string {
  return layer.enabled ? 'Enabled' : 'Draft (disabled)';
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

function deleteLayer(workspace: string, service: string, layer: Layer) {
  return call(
    api.DELETE('/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}', {
      params: { path: { workspace, service, layer: layer.id }, header: { 'If-Match': etag(layer.version) } },
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
      <SearchForm
        label="Search layers"
        hint="Public id, title or source table. The API has no search filter: the console reads the service's layers and filters them here."
        search={search}
        onSearch={(text) => {
          list.firstPage();
          setSearch(text);
        }}
      />
      <section aria-labelledby="layers-heading">
        <h2 id="layers-heading">{search ? `Layers matching “${search}”` : 'Layers'}</h2>
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
      </section>
      <Confirm
        {...remove.dialog}
        title={`Delete layer ${remove.asking?.public_id ?? ''}?`}
        confirmLabel="Delete layer"
        danger
      >
        <p>A layer that a layer group contains can't be deleted until the group lets it go.</p>
      </Confirm>
    </>
  );
}

/* ---------------------------------------------------------------- one layer */

function EditLayer({
  workspace,
  service,
  layer,
  onSaved,
}: {
  workspace: string;
  service: string;
  layer: Layer;
  onSaved: (l: Layer) => void;
}) {
  const [title, setTitle] = useState(layer.title);
  const [description, setDescription] = useState(layer.description ?? '');
  const [enabled, setEnabledState] = useState(layer.enabled);
  const [isPublic, setPublic] = useState(layer.public);
  const [saved, setSaved] = useState<string>();
  const enabledId = useId();
  const publicId = useId();
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    setSaved(undefined);
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}', {
        params: {
          path: { workspace, service, layer: layer.id },
          header: { 'If-Match': etag(layer.version) },
        },
        body: { title, description, enabled, public: isPublic },
      }),
    );
    setSaved(`Saved (version ${updated.version}).`);
    onSaved(updated);
  });
  return (
    <section aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit</h2>
      <form onSubmit={(event) => void save.run(event)}>
        <Field label="Title" error={issueFor(save.error, 'body.title')}>
          {(props) => <input {...props} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />}
        </Field>
        <Field label="Description" error={issueFor(save.error, 'body.description')}>
          {(props) => (
            <textarea
              {...props}
              rows={3}
              value={description}
              onInput={(e) => setDescription(e.currentTarget.value)}
            />
          )}
        </Field>
        <div class="check">
          <input
            id={enabledId}
            type="checkbox"
            checked={enabled}
            onChange={(e) => setEnabledState(e.currentTarget.checked)}
          />
          <label for={enabledId}>Enabled (enabling a draft validates its source)</label>
        </div>
        <div class="check">
          <input
            id={publicId}
            type="checkbox"
            checked={isPublic}
            onChange={(e) => setPublic(e.currentTarget.checked)}
          />
          <label for={publicId}>Public (readable without credentials)</label>
        </div>
        <SaveActions action={save} saved={saved} />
      </form>
    </section>
  );
}

export function LayerPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const workspace = params.workspace as string;
  const service = params.service as string;
  const id = params.layer as string;
  const loaded = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}', {
          params: { path: { workspace, service, layer: id } },
        }),
      ),
    [workspace, service, id],
  );
  const [current, setCurrent] = useState<Layer>();
  const layer = current && current.id === loaded.data?.id ? current : loaded.data;
  const remove = useConfirmed(async (layer: Layer) => {
    await deleteLayer(workspace, service, layer);
    route(paths.layers(workspace, service));
  });
  const name = layer?.public_id ?? id;
  return (
    <>
      <PageTitle title={`Layer ${name}`}>Layer {name}</PageTitle>
      <p>
        <a href={paths.layers(workspace, service)}>Layers of {service}</a> ·{' '}
        <a href={paths.service(workspace, service)}>Service {service}</a>
      </p>
      <ErrorNote error={loaded.error} />
      {layer ? (
        <>
          <dl class="facts">
            <dt>Title</dt>
            <dd>{layer.title}</dd>
            <dt>Description</dt>
            <dd>{layer.description || '—'}</dd>
            <dt>State</dt>
            <dd>{stateOf(layer)}</dd>
            <dt>Access</dt>
            <dd>
              {layer.public ? 'Public' : 'Restricted'}
              {layer.allowed_roles.length ? ` (roles: ${layer.allowed_roles.join(', ')})` : ''}
            </dd>
            <dt>Source</dt>
            <dd>{sourceOf(layer)}</dd>
            <dt>Geometry type</dt>
            <dd>{layer.geometry_type ?? '—'}</dd>
            <dt>Default CRS</dt>
            <dd>EPSG:{layer.crs_default}</dd>
            <dt>Styles</dt>
            <dd>
              {layer.styles.length ? layer.styles.join(', ') : '—'}
              {layer.default_style ? ` (default ${layer.default_style})` : ''}
            </dd>
            <dt>Dimensions</dt>
            <dd>{layer.dimensions.length ? layer.dimensions.map((d) => d.name).join(', ') : '—'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{layer.id}</code>
            </dd>
            <dt>Version</dt>
            <dd>{layer.version}</dd>
            <dt>Created</dt>
            <dd>
              <When at={layer.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When at={layer.updated_at} />
            </dd>
          </dl>
          {layer.sql_view ? (
            <section aria-labelledby="sql-heading">
              <h2 id="sql-heading">SQL view</h2>
              <pre class="sql">
                <code>{layer.sql_view.sql}</code>
              </pre>
              <p>
                Geometry column <code>{layer.sql_view.geometry_column}</code>, id column{' '}
                <code>{layer.sql_view.id_column}</code>
                {layer.sql_view.srid ? `, SRID ${layer.sql_view.srid}` : ''}.
              </p>
            </section>
          ) : null}
          <section aria-labelledby="map-heading">
            <h2 id="map-heading">Map and extent</h2>
            {layer.native_extent || layer.enabled ? (
              <LayerMap workspace={workspace} layer={layer} />
            ) : (
              <p>No extent is known for this layer yet (a draft is not read from its source).</p>
            )}
          </section>
          <LayerOgcLinks workspace={workspace} layer={layer} />
          <EditLayer
            key={layer.id}
            workspace={workspace}
            service={service}
            layer={layer}
            onSaved={setCurrent}
          />
          <DeleteSection
            label="Delete layer…"
            busy={remove.busy}
            error={remove.error}
            onDelete={() => remove.ask(layer)}
          />
          <Confirm
            {...remove.dialog}
            title={`Delete layer ${layer.public_id}?`}
            confirmLabel="Delete layer"
            danger
          >
            <p>A layer that a layer group contains can't be deleted until the group lets it go.</p>
          </Confirm>
        </>
      ) : loaded.loading ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}
