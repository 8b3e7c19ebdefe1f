/**
 * Harvest jobs for a mosaic's whole root: start one, follow the newest (progress polled), cancel it
 * (ADR 0136).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, call, etag, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor } from '#console/components/forms.tsx';
import { Progress } from '#console/components/page-parts.tsx';

type HarvestJob = Schemas['MosaicHarvestJob'];

const unfinished = (job: HarvestJob) => job.status === 'queued' || job.status === 'running';

/** Harvest jobs: start one for the whole root, follow the newest (polled while it runs), cancel it. */
export function HarvestJobs({
  workspace,
  service,
  onProgress,
}: {
  workspace: string;
  service: string;
  onProgress: () => void;
}) {
  const [pattern, setPattern] = useState('');
  const [removeMissing, setRemoveMissing] = useState(false);
  const [job, setJob] = useState<HarvestJob>();
  const [seq, setSeq] = useState(0);
  const base = '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest-jobs' as const;
  // The newest job of the mosaic (the listing is in creation order: the last page's last item).
  useEffect(() => {
    let stopped = false;
    void (async () => {
      let cursor: string | undefined;
      let last: HarvestJob | undefined;
      do {
        const page = await call(
          api.GET(base, {
            params: { path: { workspace, service }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
          }),
        );
        last = page.jobs.at(-1) ?? last;
        cursor = page.next_cursor ?? undefined;
      } while (cursor && !stopped);
      if (!stopped) setJob(last);
    })().catch(() => undefined);
    return () => {
      stopped = true;
    };
  }, [workspace, service]);
  // While the job runs: read it every second; the mosaic above follows its generations.
  useEffect(() => {
    if (!job || !unfinished(job)) return;
    const timer = setTimeout(async () => {
      try {
        const next = await call(
          api.GET(`${base}/{job}`, { params: { path: { workspace, service, job: job.id } } }),
        );
        setJob(next);
        if (next.progress.granules_added !== job.progress.granules_added || !unfinished(next)) onProgress();
      } catch {
        setSeq((n) => n + 1);
      }
    }, 1000);
    return () => clearTimeout(timer);
  }, [job, seq]);
  const start = useAction(async (event: Event) => {
    event.preventDefault();
    setJob(
      await call(
        api.POST(base, {
          params: { path: { workspace, service } },
          body: {
            ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
            ...(removeMissing ? { remove_missing: true } : {}),
          },
        }),
      ),
    );
  });
  const cancel = useAction(async () => {
    if (!job) return;
    setJob(
      await call(
        api.DELETE(`${base}/{job}`, {
          params: { path: { workspace, service, job: job.id }, header: { 'If-Match': etag(job.version) } },
        }),
      ),
    );
  });
  const p = job?.progress;
  return (
    <section aria-labelledby="harvest-jobs-heading">
      <h2 id="harvest-jobs-heading">Harvest jobs</h2>
      <p>
        Harvests every matching file under the root in the background, in chunks (each chunk a new
        generation); unreadable files are counted and listed, files already in the mosaic skipped. One job at
        a time.
      </p>
      <form onSubmit={(event) => void start.run(event)}>
        <Field
          label="Files to harvest"
          hint="A glob under the root; empty means **/*.{tif,tiff,TIF,TIFF}."
          error={issueFor(start.error, 'body.pattern')}
        >
          {(props) => <input {...props} value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />}
        </Field>
        <label>
          <input
            type="checkbox"
            checked={removeMissing}
            onChange={(e) => setRemoveMissing(e.currentTarget.checked)}
          />{' '}
          Remove granules whose file is gone
        </label>
        <button type="submit" class="primary" disabled={start.busy || (job !== undefined && unfinished(job))}>
          {start.busy ? 'Starting…' : 'Start harvest job'}
        </button>
        <ErrorNote error={start.error} />
      </form>
      {job && p ? (
        <div class="notice" role="status" aria-label="Harvest job">
          <p>
            Job <code>{job.id}</code>: <strong>{job.status}</strong>
            {job.cancel_requested && unfinished(job) ? ' (stopping…)' : ''}
          </p>
          {p.files_total !== undefined ? (
            <Progress
              value={p.files_scanned}
              max={Math.max(p.files_total, 1)}
              label="Files scanned"
              done={job.status === 'succeeded'}
              run={job.id}
            />
          ) : null}
          <p>
            {p.files_scanned} files scanned{p.files_total !== undefined ? ` of ${p.files_total}` : ''};{' '}
            {p.granules_added} granules added, {p.granules_removed} removed, {p.files_skipped} skipped,{' '}
            {p.files_failed} failed.
          </p>
          {job.failures.length ? (
            <ul>
              {job.failures.map((f) => (
                <li key={f.path}>
                  <code>{f.path}</code>: {f.message}
                </li>
              ))}
            </ul>
          ) : null}
          {job.error ? <p>{job.error.message}</p> : null}
          {unfinished(job) && !job.cancel_requested ? (
            <button type="button" class="danger" disabled={cancel.busy} onClick={() => void cancel.run()}>
              Cancel harvest job
            </button>
          ) : null}
          <ErrorNote error={cancel.error} />
        </div>
      ) : null}
    </section>
  );
}
