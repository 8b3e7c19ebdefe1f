/** Services of a workspace: the paged list and registering a PostGIS data source (or a raster mosaic). */
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, FormSection } from '#console/components/forms.tsx';
import { PagedSection, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { bodyOf, connectionSummary, EMPTY_FORM, ServiceFields, type ServiceForm } from './service-form.tsx';

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
    <PagedSection
      id="services-heading"
      heading="Services"
      list={list}
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
    </PagedSection>
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
    <FormSection id="register-heading" heading="Register a service" onSubmit={create.run}>
      <ServiceFields form={form} set={set} error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        Register service
      </button>
      <ErrorNote error={create.error} />
    </FormSection>
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
