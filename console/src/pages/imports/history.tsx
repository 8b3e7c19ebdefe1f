/** An import's history as a timeline, and the progress of its rollback's deletion. */
import { api, call } from '#console/api.ts';
import { Loaded, usePolled } from '#console/components/data.tsx';
import { ErrorNote } from '#console/components/forms.tsx';
import { Pager, usePagedList } from '#console/components/lists.tsx';
import { StatusBadge, When } from '#console/components/page-parts.tsx';
import { formatCount as count, formatBytes } from '#console/format.ts';
import { paths } from '#console/routes.ts';
import { DeletionProgress, deletionActive } from '../deletions.tsx';
import type { ImportJob } from './import-status.ts';

export function History({ workspace, job }: { workspace: string; job: ImportJob }) {
  const history = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/imports/{import}/history', {
          params: { path: { workspace, import: job.id }, query: { limit: 100, ...page } },
        }),
      ),
    [workspace, job.id, job.version],
  );
  return (
    <Loaded state={history}>
      {(data) => (
        <>
          <ol class="timeline" aria-label="History of the import">
            {data.events.map((event) => (
              <li key={event.id}>
                <span class="when">
                  <When at={event.created_at} />
                </span>
                <StatusBadge status={event.status} /> <span>phase {event.phase}</span>
                <span class="counts">
                  {formatBytes(event.processed_bytes)} read · {count(event.processed_features)} features ·{' '}
                  {event.processed_layers} layer{event.processed_layers === 1 ? '' : 's'}
                </span>
                {event.error_message ? <span class="counts">Error: {event.error_message}</span> : null}
                {event.warnings?.length ? (
                  <span class="counts">Warnings: {event.warnings.join('; ')}</span>
                ) : null}
              </li>
            ))}
          </ol>
          {data.events.length === 0 ? <p>No events yet.</p> : null}
          {history.pager.next || history.pager.onFirst ? <Pager {...history.pager} /> : null}
        </>
      )}
    </Loaded>
  );
}

export function RollbackProgress({ id }: { id: string }) {
  const op = usePolled(
    () => call(api.GET('/api/v1/deletions/{id}', { params: { path: { id } } })),
    [id],
    deletionActive,
  );
  return (
    <div>
      <p>
        The service goes through the recursive deletion workflow:{' '}
        <a href={paths.deletion(id)}>follow the deletion</a>.
      </p>
      {op.data ? (
        <>
          <p>
            Deletion <StatusBadge status={op.data.status} /> (phase {op.data.phase})
          </p>
          <DeletionProgress op={op.data} label="Rollback deletion" />
          {op.data.last_error ? <p class="error">{op.data.last_error}</p> : null}
        </>
      ) : null}
      <ErrorNote error={op.error} />
    </div>
  );
}
