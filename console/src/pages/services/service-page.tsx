/**
 * One service: describe, test its connection, edit (If-Match), discover its tables and publish them
 * as layers, validate an SQL view and publish it, delete (the plan shown first).
 */
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, call, etag, type Schemas } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { Confirm, DeleteSection } from '#console/components/dialogs.tsx';
import { ErrorNote, FormSection, SaveActions } from '#console/components/forms.tsx';
import { PageTitle, RecordFacts } from '#console/components/page-parts.tsx';
import { type DeletionPlan, DeletionPlanView } from '#console/deletion-plan.tsx';
import { paths } from '#console/routes.ts';
import { Discover } from './discover.tsx';
import {
  bodyOf,
  connectionSummary,
  formOf,
  type Service,
  ServiceFields,
  type ServiceForm,
} from './service-form.tsx';
import { SqlView } from './sql-view.tsx';

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
    <FormSection id="edit-heading" heading="Edit" onSubmit={save.run}>
      <ServiceFields form={form} set={set} error={save.error} editing />
      <SaveActions action={save} saved={saved} />
    </FormSection>
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
            <RecordFacts id={service.id} version={service.version} updated={service.updated_at} />
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
