/**
 * Services of a workspace: the paged list and registering a PostGIS data source (or a raster
 * mosaic). One service: describe, test its connection, edit (If-Match), discover its tables and
 * publish them as layers, validate an SQL view and publish it, delete (the plan shown first).
 */
import { useId, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { operations } from '../../../client/api-types.ts';
import { allOf, api, call, etag, type Schemas } from '../api.ts';
import { useAction, useLoad } from '../components/data.tsx';
import { Confirm, DeleteSection } from '../components/dialogs.tsx';
import { ErrorNote, Field, issueFor, SaveActions, SelectInput, TextInput } from '../components/forms.tsx';
import { PagedTable, usePagedList } from '../components/lists.tsx';
import { PageTitle, When } from '../components/page-parts.tsx';
import { type DeletionPlan, DeletionPlanView } from '../deletion-plan.tsx';
import { paths } from '../routes.ts';
import './services.css';

type Service = Schemas['Service'];
type Discovered = Schemas['DiscoveredLayer'];
type Validation = Schemas['ValidateSQLResponse'];
type ServiceInput = operations['createService']['requestBody']['content']['application/json'];
type LayerInput = operations['createLayer']['requestBody']['content']['application/json'];

type SslMode = NonNullable<Extract<Service['connection'], { host: string }>['sslmode']>;
const SSL_MODES = allOf<SslMode>({ disable: true, prefer: true, require: true, 'verify-full': true });

/** The fields of the register and edit forms, as the operator types them. */
interface ServiceForm {
  name: string;
  type: Service['type'];
  host: string;
  port: string;
  database: string;
  user: string;
  password: string;
  sslmode: '' | SslMode;
  schemas: string;
  root_uri: string;
  enabled: boolean;
}

const EMPTY_FORM: ServiceForm = {
  name: '',
  type: 'postgis',
  host: '',
  port: '5432',
  database: '',
  user: '',
  password: '',
  sslmode: '',
  schemas: '',
  root_uri: '',
  enabled: true,
};

function formOf(service: Service): ServiceForm {
  const c = service.connection;
  if ('root_uri' in c)
    return {
      ...EMPTY_FORM,
      name: service.name,
      type: 'raster_mosaic',
      root_uri: c.root_uri,
      enabled: service.enabled,
    };
  return {
    ...EMPTY_FORM,
    name: service.name,
    type: 'postgis',
    host: c.host,
    port: String(c.port),
    database: c.database,
    user: c.user,
    sslmode: c.sslmode ?? '',
    schemas: (c.schemas ?? []).join(', '),
    enabled: service.enabled,
  };
}

/** The body of createService/updateService; an empty password is left out (the stored one stays). */
function bodyOf(form: ServiceForm): ServiceInput {
  if (form.type === 'raster_mosaic') {
    return {
      name: form.name.trim(),
      type: 'raster_mosaic',
      enabled: form.enabled,
      connection: { root_uri: form.root_uri.trim() },
    };
  }
  const schemas = form.schemas
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    name: form.name.trim(),
    type: 'postgis',
    enabled: form.enabled,
    connection: {
      host: form.host.trim(),
      ...(form.port.trim() ? { port: Number(form.port.trim()) } : {}),
      database: form.database.trim(),
      user: form.user.trim(),
      ...(form.password ? { password: form.password } : {}),
      ...(form.sslmode ? { sslmode: form.sslmode } : {}),
      ...(schemas.length ? { schemas } : {}),
    },
  };
}

/** The fields of a service's connection, shared by the register and edit forms. */
function ServiceFields({
  form,
  set,
  error,
  editing,
}: {
  form: ServiceForm;
  set: (patch: Partial<ServiceForm>) => void;
  error: unknown;
  editing?: boolean;
}) {
  const c = 'body.connection';
  const enabledId = useId();
  return (
    <>
      <TextInput
        label="Name"
        hint="Letters, digits, '.', '-' and '_'; it names the service in URLs."
        error={issueFor(error, 'body.name')}
        required
        value={form.name}
        onInput={(text) => set({ name: text })}
      />
      {editing ? null : (
        <Field label="Type" error={issueFor(error, 'body.type')}>
          {(props) => (
            <select
              {...props}
              value={form.type}
              onChange={(e) => set({ type: e.currentTarget.value as ServiceForm['type'] })}
            >
              <option value="postgis">PostGIS database</option>
              <option value="raster_mosaic">Raster mosaic (GeoTIFF/COG directory)</option>
            </select>
          )}
        </Field>
      )}
      {form.type === 'raster_mosaic' ? (
        <TextInput
          label="Root URI"
          hint="An absolute directory, file:///path or s3://bucket/prefix that the host can read."
          error={issueFor(error, `${c}.root_uri`)}
          required
          value={form.root_uri}
          onInput={(text) => set({ root_uri: text })}
        />
      ) : (
        <>
          <div class="row service-host">
            <TextInput
              label="Host"
              error={issueFor(error, `${c}.host`)}
              required
              value={form.host}
              onInput={(text) => set({ host: text })}
            />
            <TextInput
              label="Port"
              error={issueFor(error, `${c}.port`)}
              inputMode="numeric"
              value={form.port}
              onInput={(text) => set({ port: text })}
            />
          </div>
          <TextInput
            label="Database"
            error={issueFor(error, `${c}.database`)}
            required
            value={form.database}
            onInput={(text) => set({ database: text })}
          />
          <TextInput
            label="User"
            error={issueFor(error, `${c}.user`)}
            required
            autocomplete="off"
            value={form.user}
            onInput={(text) => set({ user: text })}
          />
          <TextInput
            label="Password"
            hint={
              editing
                ? 'Write-only: leave empty to keep the stored password.'
                : 'Write-only: stored encrypted and never shown again.'
            }
            error={issueFor(error, `${c}.password`)}
            type="password"
            autocomplete="new-password"
            value={form.password}
            onInput={(text) => set({ password: text })}
          />
          <SelectInput<ServiceForm['sslmode']>
            label="SSL mode"
            error={issueFor(error, `${c}.sslmode`)}
            value={form.sslmode}
            options={SSL_MODES}
            onChange={(sslmode) => set({ sslmode })}
            empty="(server default)"
          />
          <TextInput
            label="Schemas"
            hint="Comma-separated; empty means every schema the user can read."
            error={issueFor(error, `${c}.schemas`)}
            value={form.schemas}
            onInput={(text) => set({ schemas: text })}
          />
        </>
      )}
      <div class="check">
        <input
          id={enabledId}
          type="checkbox"
          checked={form.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
        />
        <label for={enabledId}>
          Enabled (an enabled service must connect, or its root be readable, before it is saved)
        </label>
      </div>
    </>
  );
}

function connectionSummary(service: Service): string {
  const c = service.connection;
  if ('root_uri' in c) return c.root_uri;
  return `${c.user}@${c.host}:${c.port}/${c.database}`;
}

function ServiceList({ workspace }: { workspace: string }) {
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services', {
          params: { path: { workspace }, query: { limit: 100, ...page } },
        }),
      ),
    [workspace],
  );
  return (
    <section aria-labelledby="services-heading">
      <h2 id="services-heading">Services</h2>
      <PagedTable
        state={list}
        pager={list.pager}
        items={(data) => data.services}
        columns={['Name', 'Type', 'Connection', 'State', 'Layers', 'Updated']}
        empty={<p>No services yet: register one below.</p>}
      >
        {(s) => (
          <tr key={s.id}>
            <td>
              <a href={paths.service(workspace, s.name)}>{s.name}</a>
            </td>
            <td>{s.type === 'postgis' ? 'PostGIS' : 'Raster mosaic'}</td>
            <td>
              <code>{connectionSummary(s)}</code>
            </td>
            <td>{s.enabled ? 'Enabled' : 'Disabled'}</td>
            <td>
              <a href={paths.layers(workspace, s.name)}>Layers of {s.name}</a>
              {s.type === 'raster_mosaic' ? (
                <>
                  {' · '}
                  <a href={paths.mosaic(workspace, s.name)}>Mosaic of {s.name}</a>
                </>
              ) : null}
            </td>
            <td>
              <When at={s.updated_at} />
            </td>
          </tr>
        )}
      </PagedTable>
    </section>
  );
}

function RegisterService({ workspace }: { workspace: string }) {
  const { route } = useLocation();
  const [form, setForm] = useState<ServiceForm>(EMPTY_FORM);
  const set = (patch: Partial<ServiceForm>) => setForm((f) => ({ ...f, ...patch }));
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const created = await call(
      api.POST('/api/v1/workspaces/{workspace}/services', {
        params: { path: { workspace } },
        body: bodyOf(form),
      }),
    );
    route(paths.service(workspace, created.name));
  });
  return (
    <section aria-labelledby="register-heading">
      <h2 id="register-heading">Register a service</h2>
      <form onSubmit={(event) => void create.run(event)}>
        <ServiceFields form={form} set={set} error={create.error} />
        <button type="submit" class="primary" disabled={create.busy}>
          Register service
        </button>
        <ErrorNote error={create.error} />
      </form>
    </section>
  );
}

export function ServicesPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  return (
    <>
      <PageTitle title={`Services of ${workspace}`}>Services of {workspace}</PageTitle>
      <p>
        <a href={paths.workspace(workspace)}>Workspace {workspace}</a> ·{' '}
        <a href={paths.layerGroups(workspace)}>Layer groups</a>
      </p>
      <ServiceList workspace={workspace} />
      <RegisterService workspace={workspace} />
    </>
  );
}

/* ---------------------------------------------------------------- one service */

function ConnectionTest({ workspace, service }: { workspace: string; service: string }) {
  const [result, setResult] = useState<Schemas['ConnectionTest']>();
  const test = useAction(async () => {
    setResult(undefined);
    setResult(
      await call(
        api.POST('/api/v1/workspaces/{workspace}/services/{service}/test-connection', {
          params: { path: { workspace, service } },
        }),
      ),
    );
  });
  return (
    <section aria-labelledby="test-heading">
      <h2 id="test-heading">Connection</h2>
      <button type="button" disabled={test.busy} onClick={() => void test.run()}>
        {test.busy ? 'Testing…' : 'Test connection'}
      </button>
      <ErrorNote error={test.error} />
      {result ? (
        result.ok ? (
          <p class="notice" role="status">
            Connection OK ({Math.round(result.duration_ms)} ms).
          </p>
        ) : (
          <div class="error" role="alert">
            <p>
              <strong>Connection failed</strong> after {Math.round(result.duration_ms)} ms
              {result.message ? `: ${result.message}` : '.'}
            </p>
          </div>
        )
      ) : null}
    </section>
  );
}

/** Publishes a layer: a discovered table (source_layer) or a validated SQL view. */
function PublishLayer({
  workspace,
  service,
  source,
  sqlView,
  defaults,
  onCancel,
  heading,
}: {
  workspace: string;
  service: string;
  source?: string;
  sqlView?: { sql: string; geometry_column: string; id_column?: string; srid?: number };
  defaults: { public_id: string; title: string };
  onCancel?: () => void;
  heading: string;
}) {
  const [publicId, setPublicId] = useState(defaults.public_id);
  const [title, setTitle] = useState(defaults.title);
  const [geometryColumn, setGeometryColumn] = useState(sqlView?.geometry_column ?? '');
  const [idColumn, setIdColumn] = useState(sqlView?.id_column ?? '');
  const [srid, setSrid] = useState(sqlView?.srid ? String(sqlView.srid) : '');
  const [enabled, setEnabled] = useState(true);
  const [published, setPublished] = useState<Schemas['Layer']>();
  const enabledId = useId();
  const publish = useAction(async (event: Event) => {
    event.preventDefault();
    setPublished(undefined);
    const body: LayerInput = {
      ...(publicId.trim() ? { public_id: publicId.trim() } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      enabled,
      ...(sqlView
        ? {
            sql_view: {
              sql: sqlView.sql,
              geometry_column: geometryColumn.trim(),
              ...(idColumn.trim() ? { id_column: idColumn.trim() } : {}),
              ...(srid.trim() ? { srid: Number(srid.trim()) } : {}),
            },
          }
        : { source_layer: source }),
    };
    setPublished(
      await call(
        api.POST('/api/v1/workspaces/{workspace}/services/{service}/layers', {
          params: { path: { workspace, service } },
          body,
        }),
      ),
    );
  });
  const id = sqlView ? 'sql' : 'table';
  return (
    <form
      class="publish"
      aria-labelledby={`publish-${id}-heading`}
      onSubmit={(event) => void publish.run(event)}
    >
      <h3 id={`publish-${id}-heading`}>{heading}</h3>
      <TextInput
        label="Public id"
        hint="Unique in the workspace: the layer's name in OGC API, WMS and tiles."
        error={issueFor(publish.error, 'body.public_id')}
        required={sqlView !== undefined}
        value={publicId}
        onInput={setPublicId}
      />
      <Field label="Title" error={issueFor(publish.error, 'body.title')}>
        {(props) => <input {...props} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />}
      </Field>
      {sqlView ? (
        <>
          <TextInput
            label="Geometry column"
            error={issueFor(publish.error, 'body.sql_view.geometry_column')}
            required
            value={geometryColumn}
            onInput={setGeometryColumn}
          />
          <TextInput
            label="Id column"
            hint="Optional."
            error={issueFor(publish.error, 'body.sql_view.id_column')}
            value={idColumn}
            onInput={setIdColumn}
          />
          <TextInput
            label="SRID"
            hint="Optional."
            error={issueFor(publish.error, 'body.sql_view.srid')}
            inputMode="numeric"
            value={srid}
            onInput={setSrid}
          />
        </>
      ) : (
        <p>
          Source table: <code>{source}</code>
        </p>
      )}
      <div class="check">
        <input
          id={enabledId}
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled(e.currentTarget.checked)}
        />
        <label for={enabledId}>Enabled (unchecked saves a draft without touching the source)</label>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={publish.busy}>
          Publish layer
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
      <ErrorNote error={publish.error} />
      {published ? (
        <p class="notice" role="status">
          Published <a href={paths.layer(workspace, service, published.id)}>{published.public_id}</a>
          {published.enabled ? '' : ' as a draft (disabled)'}.
        </p>
      ) : null}
    </form>
  );
}

function Extent({ extent }: { extent: Discovered['extent'] }) {
  if (!extent) return <span>—</span>;
  const f = (n: number) => n.toFixed(4);
  return (
    <span>
      {f(extent.min_x)}, {f(extent.min_y)} – {f(extent.max_x)}, {f(extent.max_y)}
    </span>
  );
}

function Discover({ workspace, service }: { workspace: string; service: string }) {
  const [found, setFound] = useState<Discovered[]>();
  const [picked, setPicked] = useState<Discovered>();
  const discover = useAction(async () => {
    setPicked(undefined);
    const result = await call(
      api.POST('/api/v1/workspaces/{workspace}/services/{service}/discover', {
        params: { path: { workspace, service } },
      }),
    );
    setFound(result.layers);
  });
  return (
    <section aria-labelledby="discover-heading">
      <h2 id="discover-heading">Discover tables</h2>
      <p>Lists the geometry tables and views the service's user can read; publish any of them as a layer.</p>
      <button type="button" disabled={discover.busy} onClick={() => void discover.run()}>
        {discover.busy ? 'Discovering…' : 'Discover'}
      </button>
      <ErrorNote error={discover.error} />
      {found ? (
        found.length === 0 ? (
          <p role="status">No readable geometry tables were found.</p>
        ) : (
          <table>
            <caption>{found.length} discovered tables</caption>
            <thead>
              <tr>
                <th scope="col">Schema</th>
                <th scope="col">Table</th>
                <th scope="col">Geometry column</th>
                <th scope="col">Geometry type</th>
                <th scope="col">SRID</th>
                <th scope="col">Extent</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {found.map((d) => (
                <tr key={d.name}>
                  <td>{d.schema}</td>
                  <td>
                    <code>{d.name}</code>
                  </td>
                  <td>{d.geometry_column}</td>
                  <td>{d.geometry_type}</td>
                  <td>{d.srid}</td>
                  <td>
                    <Extent extent={d.extent} />
                  </td>
                  <td>
                    <button type="button" aria-label={`Publish ${d.name}`} onClick={() => setPicked(d)}>
                      Publish
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
      {picked ? (
        <PublishLayer
          key={picked.name}
          workspace={workspace}
          service={service}
          source={picked.name}
          defaults={{ public_id: picked.table, title: picked.table }}
          heading={`Publish ${picked.name}`}
          onCancel={() => setPicked(undefined)}
        />
      ) : null}
    </section>
  );
}

function SqlView({ workspace, service }: { workspace: string; service: string }) {
  const [sql, setSql] = useState('');
  const [result, setResult] = useState<{ sql: string; validation: Validation }>();
  const validate = useAction(async (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    const validation = await call(
      api.POST('/api/v1/workspaces/{workspace}/services/{service}/validate-sql', {
        params: { path: { workspace, service } },
        body: { sql },
      }),
    );
    setResult({ sql, validation });
  });
  const v = result?.validation;
  const refused = v && !v.valid ? `Not a valid SQL view: ${v.error ?? 'the API gave no reason.'}` : undefined;
  const sqlIssue = issueFor(validate.error, 'body.sql');
  return (
    <section aria-labelledby="sql-heading">
      <h2 id="sql-heading">SQL view</h2>
      <p>A read-only query over the service's tables, published as a layer of its own.</p>
      <form onSubmit={(event) => void validate.run(event)}>
        <Field
          label="SQL"
          hint="One SELECT statement; the API refuses writes and forbidden functions."
          error={sqlIssue ?? refused}
        >
          {(props) => (
            <textarea
              {...props}
              required
              rows={6}
              spellcheck={false}
              value={sql}
              onInput={(e) => {
                setSql(e.currentTarget.value);
                setResult(undefined);
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={validate.busy}>
          {validate.busy ? 'Validating…' : 'Validate'}
        </button>
        {sqlIssue ? null : <ErrorNote error={validate.error} />}
      </form>
      {v?.valid && v.discovered ? (
        <>
          <p class="notice" role="status">
            Valid: geometry column <code>{v.discovered.geometry_column}</code> ({v.discovered.geometry_type},
            SRID {v.discovered.srid}), suggested id column{' '}
            <code>{v.discovered.suggested_id_column || '—'}</code>.
          </p>
          <table>
            <caption>Columns of the SQL view</caption>
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">Type</th>
              </tr>
            </thead>
            <tbody>
              {v.discovered.columns.map((column) => (
                <tr key={column.name}>
                  <td>
                    <code>{column.name}</code>
                  </td>
                  <td>{column.type}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <PublishLayer
            key={result?.sql}
            workspace={workspace}
            service={service}
            sqlView={{
              sql: result?.sql ?? sql,
              geometry_column: v.discovered.geometry_column,
              ...(v.discovered.suggested_id_column ? { id_column: v.discovered.suggested_id_column } : {}),
              srid: v.discovered.srid,
            }}
            defaults={{ public_id: '', title: '' }}
            heading="Publish as layer"
          />
        </>
      ) : null}
    </section>
  );
}

function EditService({
  workspace,
  service,
  onSaved,
}: {
  workspace: string;
  service: Service;
  onSaved: (s: Service) => void;
}) {
  const [form, setForm] = useState<ServiceForm>(() => formOf(service));
  const [saved, setSaved] = useState<string>();
  const set = (patch: Partial<ServiceForm>) => setForm((f) => ({ ...f, ...patch }));
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    setSaved(undefined);
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/services/{service}', {
        params: { path: { workspace, service: service.id }, header: { 'If-Match': etag(service.version) } },
        body: bodyOf(form),
      }),
    );
    setForm({ ...formOf(updated), password: '' });
    setSaved(`Saved (version ${updated.version}).`);
    onSaved(updated);
  });
  return (
    <section aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit</h2>
      <form onSubmit={(event) => void save.run(event)}>
        <ServiceFields form={form} set={set} error={save.error} editing />
        <SaveActions action={save} saved={saved} />
      </form>
    </section>
  );
}

function DeleteService({ workspace, service }: { workspace: string; service: Service }) {
  const { route } = useLocation();
  const [plan, setPlan] = useState<DeletionPlan>();
  const ask = useAction(async () => {
    setPlan(
      await call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/deletion-plan', {
          params: { path: { workspace, service: service.id } },
        }),
      ),
    );
  });
  const remove = useAction(async () => {
    setPlan(undefined);
    const result = await call(
      api.DELETE('/api/v1/workspaces/{workspace}/services/{service}', {
        params: {
          path: { workspace, service: service.id },
          query: { recurse: 'true' },
          header: { 'If-Match': etag(service.version) },
        },
      }),
    );
    if (result && typeof result === 'object' && 'id' in result) route(paths.deletion(result.id));
    else route(paths.services(workspace));
  });
  return (
    <>
      <DeleteSection
        label="Delete service…"
        busy={ask.busy || remove.busy}
        error={ask.error ?? remove.error}
        onDelete={() => void ask.run()}
      >
        <p>
          The console shows what goes with the service (its layers, the groups holding them, granules) first.
        </p>
      </DeleteSection>
      <Confirm
        open={plan !== undefined}
        title={`Delete service ${service.name}?`}
        confirmLabel={plan && plan.total > 0 ? 'Delete everything' : 'Delete'}
        danger
        onConfirm={() => void remove.run()}
        onCancel={() => setPlan(undefined)}
      >
        {plan ? <DeletionPlanView plan={plan} /> : null}
      </Confirm>
    </>
  );
}

export function ServicePage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const workspace = params.workspace as string;
  const name = params.service as string;
  const loaded = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}', {
          params: { path: { workspace, service: name } },
        }),
      ),
    [workspace, name],
  );
  // The answer of a save, until the page loads the service again.
  const [current, setCurrent] = useState<Service>();
  const service = current && current.id === loaded.data?.id ? current : loaded.data;
  return (
    <>
      <PageTitle title={`Service ${name}`}>Service {name}</PageTitle>
      <p>
        <a href={paths.services(workspace)}>Services of {workspace}</a>
      </p>
      <ErrorNote error={loaded.error} />
      {service ? (
        <>
          <dl class="facts">
            <dt>Type</dt>
            <dd>{service.type === 'postgis' ? 'PostGIS' : 'Raster mosaic'}</dd>
            <dt>Connection</dt>
            <dd>
              <code>{connectionSummary(service)}</code>
            </dd>
            {'root_uri' in service.connection ? null : (
              <>
                <dt>SSL mode</dt>
                <dd>{service.connection.sslmode ?? '(server default)'}</dd>
                <dt>Schemas</dt>
                <dd>{service.connection.schemas?.join(', ') || 'all readable'}</dd>
                <dt>Password</dt>
                <dd>{service.configured_secrets.includes('password') ? 'set (never shown)' : 'not set'}</dd>
              </>
            )}
            <dt>State</dt>
            <dd>{service.enabled ? 'Enabled' : 'Disabled'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{service.id}</code>
            </dd>
            <dt>Version</dt>
            <dd>{service.version}</dd>
            <dt>Updated</dt>
            <dd>
              <When at={service.updated_at} />
            </dd>
          </dl>
          <nav class="row" aria-label="Of this service">
            <a href={paths.layers(workspace, service.name)}>Layers of {service.name}</a>
            {service.type === 'raster_mosaic' ? (
              <a href={paths.mosaic(workspace, service.name)}>Mosaic of {service.name}</a>
            ) : null}
          </nav>
          {service.type === 'postgis' ? (
            <>
              <ConnectionTest workspace={workspace} service={service.id} />
              <Discover workspace={workspace} service={service.id} />
              <SqlView workspace={workspace} service={service.id} />
            </>
          ) : null}
          <EditService
            key={service.id}
            workspace={workspace}
            service={service}
            onSaved={(updated) => {
              setCurrent(updated);
              if (updated.name !== name) route(paths.service(workspace, updated.name), true);
            }}
          />
          <DeleteService workspace={workspace} service={service} />
        </>
      ) : loaded.loading ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}
