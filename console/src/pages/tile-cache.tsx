/**
 * A workspace's persistent tile cache (ADR 0139): what it holds (tiles, bytes, quota, the clear
 * generation, where tiles live), clearing its caches after a confirmation, seed / reseed /
 * truncate jobs (layers by public id, a zoom range, an optional bbox), and the jobs with a live
 * progress bar (the progress polled every second) and a Cancel button while one runs. Reading
 * needs the viewer role; starting, cancelling and clearing the workspace's admins: the others see
 * the figures and the jobs without those controls.
 */
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { operations } from '../../../client/api-types.ts';
import { allOf, api, call, type Schemas } from '../api.ts';
import { Loaded, useAction, useLoad } from '../components/data.tsx';
import { Confirm } from '../components/dialogs.tsx';
import { ErrorNote, Field, issueFor, Notice, SelectInput, TextInput } from '../components/forms.tsx';
import { PageTitle, Progress, When } from '../components/page-parts.tsx';
import { formatBytes, formatCount, plural, statusText } from '../format.ts';
import { paths } from '../routes.ts';
import { roleIn, useSession } from '../session.ts';

type Stats = Schemas['TileCacheStats'];
type Job = Schemas['TileCacheJob'];
type JobProgress = Schemas['TileCacheJobProgress'];
type JobInput = operations['createTileCacheJob']['requestBody']['content']['application/json'];
type Cleared = Schemas['WorkspaceCacheCleared'];

const base = '/api/v1/workspaces/{workspace}/tile-cache/jobs' as const;
const TYPES = allOf<JobInput['type']>({ seed: true, reseed: true, truncate: true });
const TYPE_HINT: Record<JobInput['type'], string> = {
  seed: 'renders the tiles not stored yet',
  reseed: 'renders every tile again',
  truncate: 'removes stored tiles',
};
/** The built-in roles below admin: they may read the cache, not change it. */
const READ_ONLY_ROLES = new Set(['viewer', 'editor']);

const unfinished = (status: Job['status']) => status === 'queued' || status === 'running';

const STORE: Record<Stats['store'], string> = {
  s3: 'S3 (the tile cache bucket)',
  directory: "the local host's directory",
  none: 'nowhere: no tile store is configured',
};

function seconds(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

function StatsFacts({ stats, workspace }: { stats: Stats; workspace: string }) {
  return (
    <>
      <dl class="facts">
        <dt>Tiles stored</dt>
        <dd>{formatCount(stats.entries)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(stats.bytes)}</dd>
        <dt>Quota</dt>
        <dd>
          {stats.quota_bytes !== undefined
            ? `${formatBytes(stats.quota_bytes)} (${Math.round((stats.bytes / Math.max(stats.quota_bytes, 1)) * 100)} % used)`
            : 'none'}
        </dd>
        <dt>Generation</dt>
        <dd>{formatCount(stats.generation)}</dd>
        <dt>Last cleared</dt>
        <dd>{stats.cleared_at ? <When at={stats.cleared_at} /> : 'never'}</dd>
        <dt>Tiles live in</dt>
        <dd>{STORE[stats.store]}</dd>
        <dt>Cache</dt>
        <dd>{stats.cache_enabled ? 'on' : 'off'}</dd>
      </dl>
      {stats.cache_enabled ? null : (
        <p>
          The tile cache is off: tiles are rendered on every request and seed jobs are refused. It is switched
          in the workspace's <a href={paths.settings(workspace)}>OGC API Tiles settings</a>.
        </p>
      )}
    </>
  );
}

/** Every enabled layer's public id (the layers a job names), read page by page. */
function useLayerIds(workspace: string) {
  return useLoad(async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const list = await call(
        api.GET('/api/v1/workspaces/{workspace}/layers', {
          params: { path: { workspace }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
        }),
      );
      for (const layer of list.layers) if (layer.enabled) ids.push(layer.public_id);
      cursor = list.next_cursor ?? undefined;
      if (!cursor) break;
    }
    return ids.sort();
  }, [workspace]);
}

function StartJob({
  workspace,
  busy,
  onStarted,
}: {
  workspace: string;
  busy: boolean;
  onStarted: (job: Job) => void;
}) {
  const layerIds = useLayerIds(workspace);
  const [type, setType] = useState<JobInput['type']>('seed');
  const [layers, setLayers] = useState<string[]>([]);
  const [zoomMin, setZoomMin] = useState('0');
  const [zoomMax, setZoomMax] = useState('');
  const [bbox, setBbox] = useState('');
  const start = useAction(async (event: Event) => {
    event.preventDefault();
    const box = bbox.trim()
      ? bbox
          .split(',')
          .map((part) => part.trim())
          .map(Number)
      : undefined;
    const body: JobInput = {
      type,
      ...(layers.length ? { layers } : {}),
      ...(zoomMin.trim() ? { zoom_min: Number(zoomMin) } : {}),
      ...(zoomMax.trim() ? { zoom_max: Number(zoomMax) } : {}),
      ...(box ? { bbox: box } : {}),
    };
    onStarted(await call(api.POST(base, { params: { path: { workspace } }, body })));
  });
  return (
    <section aria-labelledby="start-job-heading">
      <h2 id="start-job-heading">Start a job</h2>
      <p>
        A seed or reseed covers at most a million tiles (layers × tiles) and needs the workspace's vector
        tiles and tile cache on; one job runs at a time per workspace.
      </p>
      <form onSubmit={(event) => void start.run(event)}>
        <SelectInput
          label="Job type"
          hint={TYPE_HINT[type]}
          error={issueFor(start.error, 'type')}
          value={type}
          options={TYPES}
          onChange={setType}
        />
        <Field
          label="Layers"
          hint={
            type === 'truncate'
              ? 'Public ids; none selected: the whole workspace, with what deleted layers and earlier generations left.'
              : 'Public ids; none selected: every enabled layer.'
          }
          error={issueFor(start.error, 'layers') ?? layerIds.error}
        >
          {(props) => (
            <select
              {...props}
              multiple
              size={Math.min(Math.max(layerIds.data?.length ?? 0, 2), 8)}
              onChange={(e) => setLayers(Array.from(e.currentTarget.selectedOptions, (o) => o.value))}
            >
              {(layerIds.data ?? []).map((id) => (
                <option key={id} value={id} selected={layers.includes(id)}>
                  {id}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="row">
          <TextInput
            label="Zoom from"
            type="number"
            min={0}
            max={24}
            value={zoomMin}
            onInput={setZoomMin}
            error={issueFor(start.error, 'zoom_min')}
          />
          <TextInput
            label="Zoom to"
            hint={type === 'truncate' ? 'Empty: 24.' : 'Required for a seed or reseed (0–24).'}
            type="number"
            min={0}
            max={24}
            value={zoomMax}
            onInput={setZoomMax}
            error={issueFor(start.error, 'zoom_max')}
          />
        </div>
        <TextInput
          label="Bounding box (optional)"
          hint="west,south,east,north in longitude/latitude (CRS84), e.g. 5.9,45.8,10.5,47.8."
          value={bbox}
          onInput={setBbox}
          error={issueFor(start.error, 'bbox')}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={start.busy || busy}>
            {start.busy ? 'Starting…' : 'Start job'}
          </button>
        </div>
        <ErrorNote error={start.error} />
      </form>
    </section>
  );
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
            api.GET(`${base}/{job}/progress`, { params: { path: { workspace, job: job.id } } }),
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
    await call(api.DELETE(`${base}/{job}`, { params: { path: { workspace, job: job.id } } }));
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

export function TileCachePage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const me = useSession();
  const role = roleIn(me, workspace);
  // The API decides; the controls are offered to those it will not refuse for their built-in role.
  const manage = role !== undefined && !READ_ONLY_ROLES.has(role);
  const stats = useLoad(
    () =>
      call(api.GET('/api/v1/workspaces/{workspace}/tile-cache/stats', { params: { path: { workspace } } })),
    [workspace],
  );
  const jobs = useLoad(async () => {
    const all: Job[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const list = await call(
        api.GET(base, {
          params: { path: { workspace }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
        }),
      );
      all.push(...list.jobs);
      cursor = list.next_cursor ?? undefined;
      if (!cursor) break;
    }
    // Listed in creation order: the newest first here.
    return all.reverse();
  }, [workspace]);
  const [asking, setAsking] = useState(false);
  const [cleared, setCleared] = useState<Cleared>();
  const clear = useAction(async () => {
    setAsking(false);
    setCleared(undefined);
    setCleared(
      await call(api.POST('/api/v1/workspaces/{workspace}/cache/clear', { params: { path: { workspace } } })),
    );
    void stats.reload();
  });
  const refresh = () => {
    void jobs.reload();
    void stats.reload();
  };
  const running = jobs.data?.some((job) => unfinished(job.status)) ?? false;

  return (
    <>
      <PageTitle title={`Tile cache · ${workspace}`}>Tile cache of {workspace}</PageTitle>
      <p>
        The vector tiles the workspace's OGC API Tiles served or a job rendered, kept per layer under a key
        carrying what their bytes depend on: a changed layer or style misses at once.
      </p>
      <section aria-labelledby="cache-stats-heading">
        <h2 id="cache-stats-heading">Statistics</h2>
        <Loaded state={stats}>{(s) => <StatsFacts stats={s} workspace={workspace} />}</Loaded>
        {manage ? (
          <>
            <div class="actions">
              <button type="button" class="danger" disabled={clear.busy} onClick={() => setAsking(true)}>
                Clear caches…
              </button>
            </div>
            <ErrorNote error={clear.error} />
            <Notice>
              {cleared
                ? `Cleared (${cleared.cleared.join(', ')}): generation ${formatCount(cleared.generation)}, effective within ${cleared.effective_within_seconds} s. Earlier generations still occupy ${plural(cleared.stale_entries, 'tile')} (${formatBytes(cleared.stale_bytes)}) until a truncate job removes them.`
                : undefined}
            </Notice>
          </>
        ) : null}
      </section>
      {manage ? <StartJob workspace={workspace} busy={running} onStarted={() => refresh()} /> : null}
      <section aria-labelledby="cache-jobs-heading">
        <h2 id="cache-jobs-heading">Jobs</h2>
        <Loaded state={jobs}>
          {(list) =>
            list.length === 0 ? (
              <p>No tile cache jobs yet.</p>
            ) : (
              <table>
                <caption>{plural(list.length, 'job')}, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Job</th>
                    <th scope="col">Type</th>
                    <th scope="col">Layers</th>
                    <th scope="col">Zoom</th>
                    <th scope="col">Status</th>
                    {manage ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {list.map((job) => (
                    <JobRow
                      key={job.id}
                      workspace={workspace}
                      job={job}
                      manage={manage}
                      onChanged={refresh}
                    />
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      <Confirm
        open={asking}
        title={`Clear the caches of ${workspace}?`}
        confirmLabel="Clear caches"
        danger
        onConfirm={() => void clear.run()}
        onCancel={() => setAsking(false)}
      >
        <p>
          Every cached tile of the workspace misses from the next request on (the generation moves), and each
          data-plane instance drops what it holds of the workspace. The stored tiles stay counted until a
          truncate job removes them.
        </p>
      </Confirm>
    </>
  );
}
