/**
 * A workspace's tile cache jobs, newest first, with a live progress bar (the progress polled every
 * second) and a Cancel button while one runs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { Loaded, useAction } from '#console/components/data.tsx';
import { ErrorNote } from '#console/components/forms.tsx';
import { Table } from '#console/components/lists.tsx';
import { Progress, When } from '#console/components/page-parts.tsx';
import { formatBytes, formatCount, plural, statusText } from '#console/format.ts';

export type Job = Schemas['TileCacheJob'];
type JobProgress = Schemas['TileCacheJobProgress'];

export const JOBS = '/api/v1/workspaces/{workspace}/tile-cache/jobs' as const;

/** A job still queued or running. */
export const unfinished = (status: Job['status']) => status === 'queued' || status === 'running';

function seconds(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

/** An unfinished job's progress, read every second (`onFinished` once it says the job ended). */
function LiveProgress({
  workspace,
  job,
  onFinished,
}: {
  workspace: string;
  job: Job;
  onFinished: () => void;
}) {
  const [progress, setProgress] = useState<JobProgress>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stopped = false;
    const timer = setTimeout(
      async () => {
        try {
          const next = await call(
            api.GET(`${JOBS}/{job}/progress`, { params: { path: { workspace, job: job.id } } }),
          );
          if (stopped) return;
          setProgress(next);
          // Finished: the list is read again (this row goes once the list says so; until then, poll on).
          if (!unfinished(next.status)) onFinished();
          setTick((n) => n + 1);
        } catch {
          if (!stopped) setTick((n) => n + 1);
        }
      },
      tick === 0 ? 0 : 1000,
    );
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [workspace, job.id, tick]);
  const p = progress;
  const total = p?.tiles_total ?? job.tiles_total;
  const done = p?.tiles_done ?? job.tiles_done;
  return (
    <div role="status" aria-label={`Progress of job ${job.id}`}>
      {total !== undefined ? (
        <Progress value={done} max={Math.max(total, 1)} label={`Tiles of job ${job.id}`} run={job.id} />
      ) : null}
      <p>
        {formatCount(done)} tiles{total !== undefined ? ` of ${formatCount(total)}` : ''}
        {p?.tiles_per_second !== undefined ? `, ${p.tiles_per_second.toFixed(1)} tiles/s` : ''}
        {p?.eta_seconds !== undefined ? `, about ${seconds(p.eta_seconds)} left` : ''}
        {p?.cancel_requested ? ' (stopping…)' : ''}
      </p>
    </div>
  );
}

function JobRow({
  workspace,
  job,
  manage,
  onChanged,
}: {
  workspace: string;
  job: Job;
  manage: boolean;
  onChanged: () => void;
}) {
  const cancel = useAction(async () => {
    await call(api.DELETE(`${JOBS}/{job}`, { params: { path: { workspace, job: job.id } } }));
    onChanged();
  });
  const open = unfinished(job.status);
  return (
    <>
      <tr>
        <td>
          <code>{job.id}</code>
          <br />
          <When at={job.created_at} />
        </td>
        <td>{job.type}</td>
        <td>{job.layers.length ? job.layers.join(', ') : 'all'}</td>
        <td>
          {job.zoom_min}–{job.zoom_max}
          {job.bbox ? (
            <>
              <br />
              <small>{job.bbox.join(', ')}</small>
            </>
          ) : null}
        </td>
        <td>
          <strong>{statusText(job.status)}</strong>
          {job.cancel_requested && open ? ' (stopping…)' : ''}
          {open ? (
            <LiveProgress workspace={workspace} job={job} onFinished={onChanged} />
          ) : (
            <p>
              {plural(job.tiles_done, 'tile')} done: {formatCount(job.tiles_rendered)} rendered,{' '}
              {formatCount(job.tiles_skipped)} skipped, {formatCount(job.tiles_removed)} removed;{' '}
              {formatBytes(job.bytes_written)} written, {formatBytes(job.bytes_removed)} removed.
            </p>
          )}
          {job.error ? (
            <p>
              <code>{job.error.reason}</code> {job.error.message}
            </p>
          ) : null}
        </td>
        {manage ? (
          <td>
            {open && !job.cancel_requested ? (
              <button
                type="button"
                class="danger"
                disabled={cancel.busy}
                aria-label={`Cancel job ${job.id}`}
                onClick={() => void cancel.run()}
              >
                Cancel
              </button>
            ) : null}
          </td>
        ) : null}
      </tr>
      {cancel.error ? (
        <tr>
          <td colSpan={manage ? 6 : 5}>
            <ErrorNote error={cancel.error} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The jobs section; `manage`: each running job's Cancel button is offered. */
export function JobList({
  workspace,
  jobs,
  manage,
  onChanged,
}: {
  workspace: string;
  jobs: { data?: Job[]; error?: unknown; loading: boolean };
  manage: boolean;
  onChanged: () => void;
}) {
  return (
    <section aria-labelledby="cache-jobs-heading">
      <h2 id="cache-jobs-heading">Jobs</h2>
      <Loaded state={jobs}>
        {(list) =>
          list.length === 0 ? (
            <p>No tile cache jobs yet.</p>
          ) : (
            <Table
              columns={['Job', 'Type', 'Layers', 'Zoom', 'Status', ...(manage ? ['Actions'] : [])]}
              caption={`${plural(list.length, 'job')}, newest first`}
            >
              {list.map((job) => (
                <JobRow key={job.id} workspace={workspace} job={job} manage={manage} onChanged={onChanged} />
              ))}
            </Table>
          )
        }
      </Loaded>
    </section>
  );
}
