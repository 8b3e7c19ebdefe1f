/** One layer: its fields, a map of it drawn from its own vector tiles, its OGC API URLs, an edit form, delete. */
import { useId, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, call, etag } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { DeleteSection, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, Field, FormSection, issueFor, SaveActions } from '#console/components/forms.tsx';
import { PageTitle, RecordFacts } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { LayerMap } from '../map-preview/layer-map.tsx';
import { LayerOgcLinks } from '../ogc-links.tsx';
import { DeleteLayerConfirm, deleteLayer, type Layer, sourceOf, stateOf } from './layer-parts.tsx';

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
    <FormSection id="edit-heading" heading="Edit" onSubmit={save.run}>
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
    </FormSection>
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
            <RecordFacts
              id={layer.id}
              version={layer.version}
              created={layer.created_at}
              updated={layer.updated_at}
            />
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
          <DeleteLayerConfirm dialog={remove.dialog} name={layer.public_id} />
        </>
      ) : loaded.loading ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}
