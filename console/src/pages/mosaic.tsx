/**
 * The raster mosaic of a `raster_mosaic` service: its active generation, harvesting GeoTIFF/COG
 * sources under its root (the answer shown), harvest jobs for whole roots (progress polled, a
 * cancel button; ADR 0136), and the paged granules, each removable (If-Match).
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { operations } from '../../../client/api-types.ts';
import { api, call, etag, type Schemas } from '../api.ts';
import { Loaded, useAction, useLoad } from '../components/data.tsx';
import { Confirm, useConfirmed } from '../components/dialogs.tsx';
import { ErrorNote, Field, issueFor, Notice } from '../components/forms.tsx';
import { PagedTable, RowError, usePagedList } from '../components/lists.tsx';
import { PageTitle, Progress, When } from '../components/page-parts.tsx';
import { paths } from '../routes.ts';
import './services.css';

type Granule = Schemas['MosaicGranule'];
type Harvest = Schemas['MosaicHarvest'];
type HarvestInput = operations['harvestMosaicGranules']['requestBody']['content']['application/json'];
type HarvestJob = Schemas['MosaicHarvestJob'];

const num = (n: number) => (Math.abs(n) >= 1000 ? n.toFixed(1) : n.toFixed(4));

function HarvestForm({
  workspace,
  service,
  onHarvested,
}: {
  workspace: string;
  service: string;
  onHarvested: () => void;
}) {
  const [pattern, setPattern] = useState('');
  const [uris, setUris] = useState('');
  const [result, setResult] = useState<Harvest>();
  const harvest = useAction(async (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    const sources = uris
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const body: HarvestInput = {
      ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
      ...(sources.length ? { uris: sources } : {}),
    };
    setResult(
      await call(
        api.POST('/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest', {
          params: { path: { workspace, service } },
          body,
        }),
      ),
    );
    onHarvested();
  });
  return (
    <section aria-labelledby="harvest-heading">
      <h2 id="harvest-heading">Harvest</h2>
      <p>
        Reads the headers of GeoTIFF/COG sources under the root and adds them together as a new generation (at
        most 90 at a time; sources already in the mosaic are skipped). Give a pattern or sources, not both.
      </p>
      <form onSubmit={(event) => void harvest.run(event)}>
        <Field
          label="Pattern"
          hint="A glob under the root; empty (with no sources) means **/*.{tif,tiff,TIF,TIFF}."
          error={issueFor(harvest.error, 'body.pattern')}
        >
          {(props) => <input {...props} value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />}
        </Field>
        <Field
          label="Sources"
          hint="One per line: a path relative to the root, or a URI inside it."
          error={issueFor(harvest.error, 'body.uris')}
        >
          {(props) => (
            <textarea {...props} rows={3} value={uris} onInput={(e) => setUris(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" class="primary" disabled={harvest.busy}>
          {harvest.busy ? 'Harvesting…' : 'Harvest'}
        </button>
        <ErrorNote error={harvest.error} />
      </form>
      {result ? (
        <div class="notice" role="status">
          <p>
            Generation {result.generation}: {result.granule_count} granules; {result.added.length} added,{' '}
            {result.skipped.length} skipped.
          </p>
          {result.added.length ? (
            <>
              <p>Added:</p>
              <ul>
                {result.added.map((g) => (
                  <li key={g.id}>
                    <code>{g.source_uri}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {result.skipped.length ? (
            <>
              <p>Skipped (already in the mosaic):</p>
              <ul>
                {result.skipped.map((uri) => (
                  <li key={uri}>
                    <code>{uri}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

const unfinished = (job: HarvestJob) => job.status === 'queued' || job.status === 'running';

/** Harvest jobs: start one for the whole root, follow the newest (polled while it runs), cancel it. */
function HarvestJobs({
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

function Granules({
  workspace,
  service,
  generation,
  onChanged,
}: {
  workspace: string;
  service: string;
  generation: number | undefined;
  onChanged: () => void;
}) {
  const [bbox, setBbox] = useState('');
  const [time, setTime] = useState('');
  const [filter, setFilter] = useState<{ bbox?: string; time?: string }>({});
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules', {
          params: { path: { workspace, service }, query: { limit: 50, ...page, ...filter } },
        }),
      ),
    [workspace, service, filter, generation],
  );
  const [deleted, setDeleted] = useState<string>();
  const remove = useConfirmed(async (granule: Granule) => {
    setDeleted(undefined);
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules/{granule}', {
        params: {
          path: { workspace, service, granule: granule.id },
          header: { 'If-Match': etag(granule.version) },
        },
      }),
    );
    setDeleted(`Removed ${granule.source_uri}.`);
    onChanged();
  });
  return (
    <section aria-labelledby="granules-heading">
      <h2 id="granules-heading">Granules</h2>
      <form
        class="row search"
        onSubmit={(event) => {
          event.preventDefault();
          list.firstPage();
          setFilter({
            ...(bbox.trim() ? { bbox: bbox.trim() } : {}),
            ...(time.trim() ? { time: time.trim() } : {}),
          });
        }}
      >
        <Field
          label="Bounding box"
          hint="minx,miny,maxx,maxy in the granules' coordinates."
          error={issueFor(list.error, 'query.bbox')}
        >
          {(props) => <input {...props} value={bbox} onInput={(e) => setBbox(e.currentTarget.value)} />}
        </Field>
        <Field
          label="Time"
          hint="An RFC 3339 instant or start/end (.. for open)."
          error={issueFor(list.error, 'query.time')}
        >
          {(props) => <input {...props} value={time} onInput={(e) => setTime(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Notice>{deleted}</Notice>
      <PagedTable
        state={list}
        pager={list.pager}
        items={(data) => data.granules}
        columns={['Source', 'CRS', 'Bounding box', 'Size', 'Bands', 'Time', 'Action']}
        caption={(data) => `Generation ${data.generation}`}
        empty={
          <p role="status">
            No granules{filter.bbox || filter.time ? ' match' : ' yet: harvest some above'}.
          </p>
        }
      >
        {(g) => (
          <Fragment key={g.id}>
            <tr>
              <td>
                <code>{g.source_uri}</code>
              </td>
              <td>{g.crs}</td>
              <td>{g.bbox.map(num).join(', ')}</td>
              <td>
                {g.width} × {g.height}
              </td>
              <td>
                {g.band_count} ({g.data_type})
              </td>
              <td>{g.time ? <When at={g.time} /> : '—'}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Remove ${g.source_uri}`}
                  onClick={() => remove.ask(g)}
                >
                  Remove
                </button>
              </td>
            </tr>
            <RowError error={remove.last?.id === g.id ? remove.error : undefined} colSpan={7} />
          </Fragment>
        )}
      </PagedTable>
      <Confirm {...remove.dialog} title="Remove this granule?" confirmLabel="Remove granule" danger>
        <p>
          <code>{remove.asking?.source_uri}</code> leaves the mosaic in a new generation; the file itself
          stays where it is.
        </p>
      </Confirm>
    </section>
  );
}

export function MosaicPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const service = params.service as string;
  const mosaic = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/mosaic', {
          params: { path: { workspace, service } },
        }),
      ),
    [workspace, service],
  );
  const reload = () => void mosaic.reload();
  return (
    <>
      <PageTitle title={`Mosaic of ${service}`}>Mosaic of {service}</PageTitle>
      <p>
        <a href={paths.service(workspace, service)}>Service {service}</a> ·{' '}
        <a href={paths.layers(workspace, service)}>Layers of {service}</a>
      </p>
      <Loaded state={mosaic}>
        {(data) => (
          <>
            <dl class="facts">
              <dt>Root</dt>
              <dd>
                <code>{data.root_uri}</code>
              </dd>
              <dt>Generation</dt>
              <dd>{data.generation}</dd>
              <dt>Granules</dt>
              <dd>{data.granule_count}</dd>
              <dt>Updated</dt>
              <dd>
                <When at={data.updated_at} />
              </dd>
            </dl>
            <HarvestForm workspace={workspace} service={service} onHarvested={reload} />
            <HarvestJobs workspace={workspace} service={service} onProgress={reload} />
            <Granules
              workspace={workspace}
              service={service}
              generation={data.generation}
              onChanged={reload}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
