/** The imports of a workspace: a new import, and the list filtered by status (followed while any works). */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { usePolled } from '#console/components/data.tsx';
import { SelectInput } from '#console/components/forms.tsx';
import { PagedTable, useCursor } from '#console/components/lists.tsx';
import { PageTitle, StatusBadge, When } from '#console/components/page-parts.tsx';
import { statusText } from '#console/format.ts';
import { paths } from '#console/routes.ts';

import { type ImportStatus, STATUSES, working } from './import-status.ts';
import { NewImport } from './new-import.tsx';
import { ServiceOf, useLiveServices } from './service-of.tsx';

export function ImportsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const page = useCursor();
  const [status, setStatus] = useState('');
  const list = usePolled(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/imports', {
          params: {
            path: { workspace },
            query: {
              limit: 50,
              ...page.query,
              ...(status ? { status: status as ImportStatus } : {}),
            },
          },
        }),
      ),
    [workspace, page.cursor, status],
    (data) => data.imports.some(working),
    2000,
  );
  const live = useLiveServices(workspace, list.data?.imports ?? []);
  return (
    <>
      <PageTitle title={`Imports · ${workspace}`}>Imports in {workspace}</PageTitle>
      <NewImport workspace={workspace} onStarted={list.reload} />
      <section aria-labelledby="imports-heading">
        <h2 id="imports-heading">Imports</h2>
        <form class="row" onSubmit={(event) => event.preventDefault()}>
          <SelectInput
            label="Status"
            value={status}
            options={STATUSES.map((s) => ({ value: s, label: statusText(s) }))}
            onChange={(chosen) => {
              page.first();
              setStatus(chosen);
            }}
            empty="Any"
          />
        </form>
        <PagedTable
          state={list}
          pager={page.pager(list.data?.next_cursor, !list.current)}
          items={(data) => data.imports}
          columns={['Name', 'Source', 'Status', 'Phase', 'Service', 'Created']}
          empty={<p>No imports{status ? ` ${statusText(status)}` : ''}.</p>}
        >
          {(job) => (
            <tr key={job.id}>
              <td>
                <a href={paths.importJob(workspace, job.id)}>{job.name}</a>
              </td>
              <td>{job.source_filename ?? job.source_uri ?? ''}</td>
              <td>
                <StatusBadge status={job.status} />
              </td>
              <td>{job.phase}</td>
              <td>
                <ServiceOf workspace={workspace} job={job} live={live} />
              </td>
              <td>
                <When at={job.created_at} />
              </td>
            </tr>
          )}
        </PagedTable>
      </section>
    </>
  );
}
