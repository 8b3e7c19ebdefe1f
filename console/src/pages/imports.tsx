/**
 * Imports of a workspace (ADR 0083): the list, a new import (drop or choose a file → createImport
 * → the file POSTed to its upload ticket with the bytes shown as they go → startImport), and one
 * import's page — status and phase with live progress while a workflow works on it, what discovery
 * found, a preview of the staged features, the plan (names, fields, CRS, make-valid), publish,
 * cancel, retry, rollback (through the deletion workflow, whose progress shows here) and the
 * history as a timeline.
 */
import './imports.css';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { allOf, api, ConsoleApiError, call, type Schemas } from '../api.ts';
import {
  Confirm,
  ErrorNote,
  Field,
  issueFor,
  Loaded,
  Notice,
  PagedTable,
  Pager,
  PageTitle,
  Progress,
  TextInput,
  useAction,
  useCursor,
  useLoad,
  useMonotone,
  usePagedList,
  When,
} from '../components.tsx';
import { bytesOf, countOf, formatBytes, formatCount, plural, statusText } from '../format.ts';
import { paths } from '../routes.ts';
import { DeletionProgress, deletionActive, StatusBadge, usePolled } from './deletions.tsx';
import { crossOrigin, type UploadTicket, uploadFile } from './import-upload.ts';
import { FeaturesMap } from './map-preview.tsx';

type ImportJob = Schemas['ImportJob'];
type ImportStatus = ImportJob['status'];
type ImportPlan = Schemas['ImportPlan'];
type LayerPlan = ImportPlan['layers'][number];

const STATUSES = allOf<ImportStatus>({
  awaiting_upload: true,
  queued: true,
  running: true,
  awaiting_plan: true,
  ready_to_publish: true,
  publishing: true,
  published: true,
  cancelling: true,
  cancelled: true,
  failed: true,
  rolling_back: true,
  rolled_back: true,
});
/** A workflow owns the job: its status and counters move on their own. */
const WORKING: ImportStatus[] = ['queued', 'running', 'publishing', 'cancelling', 'rolling_back'];
/** Features are staged (or published) and can be previewed. */
const STAGED: ImportStatus[] = ['running', 'ready_to_publish', 'publishing', 'published'];
const NOT_CANCELLABLE: ImportStatus[] = [
  'publishing',
  'published',
  'rolling_back',
  'rolled_back',
  'cancelling',
  'cancelled',
];

const working = (job: ImportJob) => WORKING.includes(job.status);
const count = formatCount;
/** The phases in which the workflow is still reading the file (nothing can be staged yet). */
const READING: ImportJob['phase'][] = ['acquire', 'upload', 'discover'];
/** Every planned feature is loaded (the counters may say less: the bar is full). */
const LOADED: ImportStatus[] = ['ready_to_publish', 'publishing', 'published'];
/** The service the import published may be gone (rolled back, or deleted on its own). */
const UNPUBLISHED: ImportStatus[] = ['rolling_back', 'rolled_back'];
const reading = (job: ImportJob) => job.status === 'running' && READING.includes(job.phase);

function importPath(workspace: string, id: string) {
  return { params: { path: { workspace, import: id } } };
}

// ---------------------------------------------------------------------------------------------
// The service of an import

/** The service an import published may still hold it: not while (or after) it is rolled back. */
const mayHoldService = (job: ImportJob) => Boolean(job.service_id) && !UNPUBLISHED.includes(job.status);

/**
 * The current names of these imports' services (false: gone; absent: being looked up). A service
 * can be renamed or deleted on its own after its import published it, and the import keeps the
 * id and the name it had. One getService per service, again when an import changes.
 */
function useLiveServices(workspace: string, jobs: ImportJob[]): Map<string, string | false> {
  const [found, setFound] = useState(() => new Map<string, string | false>());
  const key = jobs
    .filter(mayHoldService)
    .map((job) => `${job.service_id}@${job.version}`)
    .sort()
    .join(',');
  useEffect(() => {
    let stopped = false;
    const ids = [...new Set(key ? key.split(',').map((k) => k.split('@')[0] as string) : [])];
    for (const id of ids) {
      api
        .GET('/api/v1/workspaces/{workspace}/services/{service}', {
          params: { path: { workspace, service: id } },
        })
        .then(
          (result) => {
            // Only a 404 says gone; another failure leaves the name shown without a verdict.
            const alive = result.data ? result.data.name : result.response.status === 404 ? false : undefined;
            if (stopped || alive === undefined) return;
            setFound((f) => (f.get(id) === alive ? f : new Map(f).set(id, alive)));
          },
          () => undefined,
        );
    }
    return () => {
      stopped = true;
    };
  }, [workspace, key]);
  return found;
}

/** The import's service: a link only while it exists, "(deleted)" once it is gone. */
function ServiceOf({
  workspace,
  job,
  live,
}: {
  workspace: string;
  job: ImportJob;
  live: Map<string, string | false>;
}) {
  if (!job.service_id) {
    // A file whose every layer goes into an existing layer creates no service (ADR 0127).
    if (job.plan?.layers.length && job.plan.layers.every((l) => l.target))
      return <>none: into existing layers</>;
    return <>{job.service_name} (not published)</>;
  }
  if (job.status === 'rolling_back')
    return (
      <>
        {job.service_name} <span class="gone">(being deleted)</span>
      </>
    );
  const alive = mayHoldService(job) ? live.get(job.service_id) : false;
  if (alive) return <a href={paths.service(workspace, alive)}>{alive}</a>;
  if (alive === false)
    return (
      <>
        {job.service_name} <span class="gone">(deleted)</span>
      </>
    );
  return <>{job.service_name}</>;
}

// ---------------------------------------------------------------------------------------------
// The list and a new import

type Step = 'create' | 'upload' | 'start' | 'done';

/** What a new import's file becomes (ADR 0127): a new layer, or the data of an existing one. */
type Into = 'new' | 'replace' | 'append';
const INTO: [Into, string][] = [
  ['new', 'A new layer'],
  ['replace', "Replace an existing layer's data"],
  ['append', 'Append to an existing layer'],
];

/** createImport's `layers` for the choice: a new layer's name, or the target. */
function layersBody(into: Into, layerName: string, target: string) {
  if (into !== 'new') return target ? { layers: [{ target: { layer: target, mode: into } }] } : {};
  return layerName ? { layers: [{ public_id: layerName }] } : {};
}

/** Layers an import published: only their data can be replaced or appended to (ADR 0127). */
const IMPORTED = /^import_[0-9a-f]{32}\./;

/** The existing layer a replace or an append targets: the workspace's imported layers. */
function TargetLayer({
  workspace,
  mode,
  value,
  onChange,
}: {
  workspace: string;
  mode: Exclude<Into, 'new'>;
  value: string;
  onChange: (id: string) => void;
}) {
  const layers = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/layers', {
          params: { path: { workspace }, query: { limit: 100 } },
        }),
      ),
    [workspace],
  );
  const choices = (layers.data?.layers ?? []).filter((l) => IMPORTED.test(l.source_layer));
  return (
    <Loaded state={layers}>
      {() => (
        <Field
          label={mode === 'replace' ? 'Layer to replace' : 'Layer to append to'}
          hint={
            mode === 'replace'
              ? "Its rows become the file's, in one step; it keeps its name, styles and URL. Rolling this import back restores its data."
              : "The file's rows are added to it; rolling this import back removes exactly them."
          }
        >
          {(props) =>
            choices.length ? (
              <select {...props} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
                <option value="">Choose a layer</option>
                {choices.map((l) => (
                  <option key={l.id} value={l.public_id}>
                    {l.public_id} ({l.service_name})
                  </option>
                ))}
              </select>
            ) : (
              <p {...props}>No layer of this workspace was published by an import yet.</p>
            )
          }
        </Field>
      )}
    </Loaded>
  );
}

function NewImport({ workspace, onStarted }: { workspace: string; onStarted: () => void }) {
  const inputId = useId();
  const hintId = useId();
  const [file, setFile] = useState<File>();
  const [over, setOver] = useState(false);
  const [name, setName] = useState('');
  const [serviceName, setServiceName] = useState('');
  const [into, setInto] = useState<Into>('new');
  const [layerName, setLayerName] = useState('');
  const [targetLayer, setTargetLayer] = useState('');
  const [autoPublish, setAutoPublish] = useState(false);
  const [job, setJob] = useState<ImportJob & { upload: UploadTicket }>();
  const [step, setStep] = useState<Step>('create');
  const [sent, setSent] = useState({ loaded: 0, total: 0 });
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ create?: unknown; upload?: unknown; start?: unknown }>({});
  const [started, setStarted] = useState<ImportJob>();

  const choose = (chosen: File | undefined) => {
    setFile(chosen);
    // Another file is another import: the ticket of the previous one is not reused.
    setJob(undefined);
    setStep('create');
    setSent({ loaded: 0, total: chosen?.size ?? 0 });
    setErrors({});
    setStarted(undefined);
  };

  const run = async (event?: Event) => {
    event?.preventDefault();
    if (!file || busy) return;
    setBusy(true);
    setErrors({});
    let current = job;
    let at: Step = step;
    try {
      if (at === 'create' || !current) {
        at = 'create';
        setStep('create');
        const created = await call(
          api.POST('/api/v1/workspaces/{workspace}/imports', {
            params: { path: { workspace } },
            body: {
              source: { kind: 'upload', filename: file.name, size_bytes: file.size },
              ...(name.trim() ? { name: name.trim() } : {}),
              ...(into === 'new' && serviceName.trim() ? { service_name: serviceName.trim() } : {}),
              ...layersBody(into, layerName.trim(), targetLayer),
              ...(autoPublish ? { auto_publish: true } : {}),
            },
          }),
        );
        if (!created.upload) throw new Error('The API answered no upload ticket for this import.');
        current = { ...created, upload: created.upload };
        setJob(current);
        at = 'upload';
        setStep('upload');
      }
      if (at === 'upload') {
        setSent({ loaded: 0, total: file.size });
        await uploadFile(current.upload, file, (loaded, total) => setSent({ loaded, total }));
        at = 'start';
        setStep('start');
      }
      const answer = await call(
        api.POST('/api/v1/workspaces/{workspace}/imports/{import}/start', importPath(workspace, current.id)),
      );
      setStarted(answer);
      setStep('done');
      onStarted();
    } catch (error) {
      setErrors({ [at]: error });
    } finally {
      setBusy(false);
    }
  };

  const total = sent.total || file?.size || 0;
  // Past the upload step the storage has every byte, whatever the last progress event said.
  const uploaded = step === 'start' || step === 'done';
  const label =
    step === 'upload' && errors.upload
      ? 'Upload again'
      : step === 'start' && errors.start
        ? 'Start the import again'
        : 'Upload and import';

  return (
    <section aria-labelledby="new-import-heading">
      <h2 id="new-import-heading">New import</h2>
      <form onSubmit={(event) => void run(event)}>
        <fieldset
          class={`dropzone${over ? ' over' : ''}`}
          onDragEnter={(event) => {
            event.preventDefault();
            setOver(true);
          }}
          onDragOver={(event) => {
            event.preventDefault();
            if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(event) => {
            event.preventDefault();
            setOver(false);
            const dropped = event.dataTransfer?.files[0];
            if (dropped) choose(dropped);
          }}
        >
          <legend>The file</legend>
          <p>Drop a file here, or choose one.</p>
          <label for={inputId}>File to import</label>
          <input
            id={inputId}
            type="file"
            aria-describedby={hintId}
            disabled={busy}
            onChange={(event) => choose(event.currentTarget.files?.[0])}
          />
          <small id={hintId} class="hint">
            GeoJSON, NDJSON, CSV, a zipped shapefile, GeoPackage or FlatGeobuf; the format is read from the
            bytes.
          </small>
          {file ? (
            <p class="chosen">
              Chosen: <strong>{file.name}</strong> ({formatBytes(file.size)})
            </p>
          ) : null}
        </fieldset>
        <Field
          label="Import name"
          hint="Empty: the file's name."
          error={issueFor(errors.create, 'body.name')}
        >
          {(props) => <input {...props} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <fieldset class="into">
          <legend>What the file becomes</legend>
          {INTO.map(([value, text]) => (
            <div class="check" key={value}>
              <input
                id={`${inputId}-into-${value}`}
                type="radio"
                name={`${inputId}-into`}
                value={value}
                checked={into === value}
                onChange={() => setInto(value)}
              />
              <label for={`${inputId}-into-${value}`}>{text}</label>
            </div>
          ))}
        </fieldset>
        {into === 'new' ? (
          <>
            <TextInput
              label="Layer name"
              hint="The public id of the file's (first) layer; empty: the name in the file. A name the workspace already uses stops the import before loading, with a free one proposed."
              error={issueFor(errors.create, 'body.layers.0.public_id')}
              value={layerName}
              onInput={setLayerName}
            />
            <TextInput
              label="Service name"
              hint="The PostGIS service the import publishes; empty: one named after the import."
              error={issueFor(errors.create, 'body.service_name')}
              value={serviceName}
              onInput={setServiceName}
            />
          </>
        ) : (
          <TargetLayer workspace={workspace} mode={into} value={targetLayer} onChange={setTargetLayer} />
        )}
        <div class="check">
          <input
            id={`${inputId}-auto`}
            type="checkbox"
            checked={autoPublish}
            onChange={(e) => setAutoPublish(e.currentTarget.checked)}
          />
          <label for={`${inputId}-auto`}>Publish as soon as it is loaded (with the discovered plan)</label>
        </div>
        <button type="submit" class="primary" disabled={!file || busy || (into !== 'new' && !targetLayer)}>
          {label}
        </button>
        <ErrorNote error={errors.create} />
      </form>
      {job ? (
        <div aria-live="polite">
          <ol class="upload-steps">
            <li>Import {job.name} created</li>
            <li aria-current={step === 'upload' ? 'step' : undefined}>
              Upload to {crossOrigin(job.upload) ? new URL(job.upload.url).host : 'this host'}:{' '}
              {bytesOf(uploaded ? total : sent.loaded, total)}
            </li>
            <li aria-current={step === 'start' ? 'step' : undefined}>Start loading</li>
          </ol>
          <Progress value={sent.loaded} max={total || 1} label="Upload" done={uploaded} run={job.id} />
          <ErrorNote error={errors.upload} />
          <ErrorNote error={errors.start} />
          {started ? <StartedImport workspace={workspace} job={started} size={file?.size ?? 0} /> : null}
        </div>
      ) : null}
    </section>
  );
}

/**
 * What became of an import started here: its status as it is now, not as startImport answered
 * (which said "queued" long after the workflow had moved on), followed while a workflow works on it.
 */
function StartedImport({ workspace, job, size }: { workspace: string; job: ImportJob; size: number }) {
  const live = usePolled(
    () => call(api.GET('/api/v1/workspaces/{workspace}/imports/{import}', importPath(workspace, job.id))),
    [workspace, job.id],
    working,
    2000,
  );
  const now = live.data ?? job;
  return (
    <p class="notice" role="status">
      Uploaded {formatBytes(size)}; import {now.name} is <StatusBadge status={now.status} />
      {working(now) ? ' (this note follows it)' : ''}.{' '}
      <a href={paths.importJob(workspace, now.id)}>Open import {now.name}</a>
    </p>
  );
}

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
          <Field label="Status">
            {(props) => (
              <select
                {...props}
                value={status}
                onChange={(e) => {
                  page.first();
                  setStatus(e.currentTarget.value);
                }}
              >
                <option value="">Any</option>
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {statusText(s)}
                  </option>
                ))}
              </select>
            )}
          </Field>
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

// ---------------------------------------------------------------------------------------------
// One import

/** The features discovery counted in the layers the plan loads. */
function plannedFeatures(job: ImportJob): number {
  const layers = job.discovery?.layers ?? [];
  const planned = job.plan?.layers.map((l) => l.source_layer);
  return layers
    .filter((l) => !planned || planned.includes(l.name))
    .reduce((sum, l) => sum + l.feature_count, 0);
}

/**
 * Where the import is, one bar per pass, each only ever moving forward: the file read (discovery
 * reads it whole once; read, it stays read) and the features loaded (full once the import is
 * loaded). The job's `processed_bytes` counts discovery's pass and then the load's own, which
 * starts again from 0 and need not reach the file's size: shown as it comes, it made the bar run
 * backwards and left a loaded import at "77 %".
 */
function JobProgress({ job }: { job: ImportJob }) {
  const size = job.discovery?.size_bytes ?? 0;
  const features = plannedFeatures(job);
  const loaded = LOADED.includes(job.status);
  const live = working(job);
  // A new run (a retry, a reload with a changed plan) starts its bar again; polls within it never go back.
  const run = `${job.id}:${job.retry_count}:${job.status === 'running' ? 'running' : 'settled'}`;
  return (
    <div aria-live="off">
      {job.discovery ? (
        <>
          <Progress value={size} max={size || 1} label="File read" done />
          <p class="progress-counts">{bytesOf(size, size)} read</p>
        </>
      ) : reading(job) ? (
        <p class="progress-counts">Reading the file: {formatBytes(job.processed_bytes)} so far</p>
      ) : null}
      {features > 0 ? (
        <>
          <Progress
            value={job.processed_features}
            max={features}
            label="Features loaded"
            done={loaded}
            run={run}
          />
          <p class="progress-counts">
            <FeaturesLoaded job={job} planned={features} loaded={loaded} run={run} /> features loaded
          </p>
        </>
      ) : job.discovery ? (
        <p class="progress-counts">{count(job.processed_features)} features loaded</p>
      ) : null}
      {job.total_layers > 0 ? (
        <p class="progress-counts">
          {count(loaded ? job.total_layers : job.processed_layers)} of {plural(job.total_layers, 'layer')}{' '}
          done
          {live ? ' — updating every second' : ''}
        </p>
      ) : live ? (
        <p class="progress-counts">Updating every second.</p>
      ) : null}
    </div>
  );
}

/** "250 of 300", as the bar beside it: never fewer than shown before in this run, all once loaded. */
function FeaturesLoaded({
  job,
  planned,
  loaded,
  run,
}: {
  job: ImportJob;
  planned: number;
  loaded: boolean;
  run: string;
}) {
  const shown = useMonotone(loaded ? planned : Math.min(job.processed_features, planned), run);
  return <>{countOf(shown, planned)}</>;
}

function Discovery({ job }: { job: ImportJob }) {
  const discovery = job.discovery;
  if (!discovery) return <p>The file has not been read yet.</p>;
  return (
    <>
      <p>
        Format <strong>{discovery.format}</strong>, {formatBytes(discovery.size_bytes)}.
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Layer</th>
            <th scope="col">Geometry</th>
            <th scope="col">SRID</th>
            <th scope="col">Features</th>
            <th scope="col">Fields</th>
          </tr>
        </thead>
        <tbody>
          {discovery.layers.map((layer) => (
            <tr key={layer.name}>
              <td>{layer.name}</td>
              <td>{layer.geometry_type ?? 'none'}</td>
              <td>{layer.srid ?? 'unknown'}</td>
              <td>{count(layer.feature_count)}</td>
              <td>{layer.fields.map((f) => `${f.name} (${f.type})`).join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {discovery.warnings.length > 0 ? (
        <div class="warnings">
          <p>Warnings:</p>
          <ul>
            {discovery.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </>
  );
}

type PreviewFeature = {
  id?: string | number;
  geometry?: { type?: string } | null;
  properties?: Record<string, unknown> | null;
};

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A 409 `nothing_staged` while the load runs: its first features are on their way, not an error. */
function notStagedYet(job: ImportJob, error: unknown): boolean {
  return (
    job.status === 'running' &&
    error instanceof ConsoleApiError &&
    error.status === 409 &&
    error.reason === 'nothing_staged'
  );
}

function Preview({ workspace, job }: { workspace: string; job: ImportJob }) {
  const layers = job.plan?.layers ?? [];
  const [chosen, setLayer] = useState(layers[0]?.public_id ?? '');
  const layer = layers.some((l) => l.public_id === chosen) ? chosen : (layers[0]?.public_id ?? '');
  // While the workflow still reads the file nothing can be staged: no request, no 409 to show.
  const staged = STAGED.includes(job.status) && !reading(job);
  const preview = useLoad(
    async () =>
      staged
        ? call(
            api.GET('/api/v1/workspaces/{workspace}/imports/{import}/preview', {
              params: {
                path: { workspace, import: job.id },
                query: { limit: 10, ...(layer ? { layer } : {}) },
              },
            }),
          )
        : undefined,
    [workspace, job.id, layer, job.version, staged],
  );
  const features = (preview.data?.features ?? []) as PreviewFeature[];
  const keys = [...new Set(features.flatMap((f) => Object.keys(f.properties ?? {})))].slice(0, 12);
  return (
    <>
      {layers.length > 1 ? (
        <Field label="Layer to preview">
          {(props) => (
            <select {...props} value={layer} onChange={(e) => setLayer(e.currentTarget.value)}>
              {layers.map((l) => (
                <option key={l.public_id} value={l.public_id}>
                  {l.public_id}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      {reading(job) ? (
        <p class="pending" role="status">
          Still reading the file… the preview follows once its features are staged.
        </p>
      ) : !staged ? (
        <p>Nothing is staged while the import is {statusText(job.status)}.</p>
      ) : notStagedYet(job, preview.error) ? (
        <p class="pending" role="status">
          Still loading… no features of this layer are staged yet.
        </p>
      ) : (
        <ErrorNote error={preview.error} />
      )}
      {staged && preview.data ? (
        features.length === 0 ? (
          <p>No features staged yet.</p>
        ) : (
          <>
            {features.some((feature) => feature.geometry) ? (
              <FeaturesMap
                features={features}
                label={`The first ${features.length} staged feature${features.length === 1 ? '' : 's'} of ${layer || layers[0]?.public_id} on the map`}
              />
            ) : null}
            <div class="preview-table">
              <table>
                <caption>
                  The first {features.length} feature{features.length === 1 ? '' : 's'} of{' '}
                  {layer || layers[0]?.public_id} (EPSG:4326)
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Id</th>
                    <th scope="col">Geometry</th>
                    {keys.map((key) => (
                      <th scope="col" key={key}>
                        {key}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {features.map((feature, i) => (
                    <tr key={String(feature.id ?? i)}>
                      <td>{cell(feature.id ?? i + 1)}</td>
                      <td>{feature.geometry?.type ?? 'none'}</td>
                      {keys.map((key) => (
                        <td key={key}>{cell(feature.properties?.[key])}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )
      ) : null}
    </>
  );
}

/** The plan discovery would suggest, for an import that has none yet. */
function planOf(job: ImportJob): ImportPlan {
  if (job.plan) return structuredClone(job.plan);
  return {
    layers: (job.discovery?.layers ?? []).map((layer) => ({
      source_layer: layer.name,
      public_id: layer.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64) || 'layer',
      title: layer.name,
      enabled: true,
      public: false,
      fields: layer.fields.map((f) => ({
        source: f.name,
        target: f.name.toLowerCase().replace(/[^a-z0-9_]+/g, '_'),
        include: true,
      })),
    })),
  };
}

type Srids = Record<number, { source: string; target: string }>;

function PlanForm({
  workspace,
  job,
  onSaved,
}: {
  workspace: string;
  job: ImportJob;
  onSaved: (job: ImportJob) => void;
}) {
  const formId = useId();
  const [plan, setPlan] = useState<ImportPlan>(() => planOf(job));
  const [srids, setSrids] = useState<Srids>(() =>
    Object.fromEntries(
      planOf(job).layers.map((l, i) => [
        i,
        {
          source: l.source_srid ? String(l.source_srid) : '',
          target: l.target_srid ? String(l.target_srid) : '',
        },
      ]),
    ),
  );
  const setLayer = (i: number, patch: Partial<LayerPlan>) =>
    setPlan((p) => ({ layers: p.layers.map((l, k) => (k === i ? { ...l, ...patch } : l)) }));
  const setField = (i: number, j: number, patch: Partial<LayerPlan['fields'][number]>) =>
    setPlan((p) => ({
      layers: p.layers.map((l, k) =>
        k === i ? { ...l, fields: l.fields.map((f, m) => (m === j ? { ...f, ...patch } : f)) } : l,
      ),
    }));
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    const body: ImportPlan = {
      layers: plan.layers.map((layer, i) => {
        const { source_srid: _s, target_srid: _t, ...rest } = layer;
        const source = srids[i]?.source.trim();
        const target = srids[i]?.target.trim();
        return {
          ...rest,
          ...(source ? { source_srid: Number(source) } : {}),
          ...(target ? { target_srid: Number(target) } : {}),
        };
      }),
    };
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/imports/{import}/plan', {
        params: { path: { workspace, import: job.id }, header: { 'If-Match': `"${job.version}"` } },
        body,
      }),
    );
    onSaved(updated);
  });
  return (
    <form onSubmit={(event) => void save.run(event)} aria-describedby={`${formId}-about`}>
      <p id={`${formId}-about`}>
        Rename layers and columns, leave fields out, set the CRS. Saving loads the data again with the plan.
      </p>
      {plan.layers.map((layer, i) => {
        const found = job.discovery?.layers.find((l) => l.name === layer.source_layer);
        const at = `body.layers.${i}`;
        return (
          <fieldset class="layer-plan" key={layer.source_layer}>
            <legend>Layer {layer.source_layer}</legend>
            <div class="plan-grid">
              <TextInput
                label="Public id"
                hint="The layer's name in the service's URLs."
                error={issueFor(save.error, `${at}.public_id`)}
                required
                value={layer.public_id}
                onInput={(text) => setLayer(i, { public_id: text })}
              />
              <TextInput
                label="Title"
                error={issueFor(save.error, `${at}.title`)}
                value={layer.title ?? ''}
                onInput={(text) => setLayer(i, { title: text })}
              />
              <TextInput
                label="Source SRID"
                hint={
                  found?.srid
                    ? `Discovered: EPSG:${found.srid}; empty keeps it.`
                    : 'Unknown in the file: give it.'
                }
                error={issueFor(save.error, `${at}.source_srid`)}
                inputMode="numeric"
                pattern="[0-9]*"
                value={srids[i]?.source ?? ''}
                onInput={(text) => {
                  const source = text;
                  setSrids((s) => ({ ...s, [i]: { source, target: s[i]?.target ?? '' } }));
                }}
              />
              <TextInput
                label="Target SRID"
                hint="Reprojects into it; empty keeps the source CRS."
                error={issueFor(save.error, `${at}.target_srid`)}
                inputMode="numeric"
                pattern="[0-9]*"
                value={srids[i]?.target ?? ''}
                onInput={(text) => {
                  const target = text;
                  setSrids((s) => ({ ...s, [i]: { source: s[i]?.source ?? '', target } }));
                }}
              />
            </div>
            <div class="row">
              <span class="check">
                <input
                  id={`${formId}-${i}-valid`}
                  type="checkbox"
                  checked={layer.make_valid ?? false}
                  onChange={(e) => setLayer(i, { make_valid: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-valid`}>Make geometries valid</label>
              </span>
              <span class="check">
                <input
                  id={`${formId}-${i}-enabled`}
                  type="checkbox"
                  checked={layer.enabled}
                  onChange={(e) => setLayer(i, { enabled: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-enabled`}>Enabled when published</label>
              </span>
              <span class="check">
                <input
                  id={`${formId}-${i}-public`}
                  type="checkbox"
                  checked={layer.public}
                  onChange={(e) => setLayer(i, { public: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-public`}>Public</label>
              </span>
            </div>
            <table class="plan-fields">
              <caption>Fields of {layer.source_layer}</caption>
              <thead>
                <tr>
                  <th scope="col" id={`${formId}-${i}-h-source`}>
                    Field in the file
                  </th>
                  <th scope="col">Type</th>
                  <th scope="col" id={`${formId}-${i}-h-include`}>
                    Include
                  </th>
                  <th scope="col" id={`${formId}-${i}-h-target`}>
                    Column
                  </th>
                </tr>
              </thead>
              <tbody>
                {layer.fields.map((field, j) => {
                  const rowId = `${formId}-${i}-f${j}`;
                  return (
                    <tr key={field.source}>
                      <td id={rowId}>{field.source}</td>
                      <td>{field.type ?? found?.fields.find((f) => f.name === field.source)?.type ?? ''}</td>
                      <td>
                        <input
                          type="checkbox"
                          aria-labelledby={`${formId}-${i}-h-include ${rowId}`}
                          checked={field.include}
                          onChange={(e) => setField(i, j, { include: e.currentTarget.checked })}
                        />
                      </td>
                      <td>
                        <input
                          type="text"
                          aria-labelledby={`${formId}-${i}-h-target ${rowId}`}
                          aria-invalid={issueFor(save.error, `${at}.fields.${j}`) ? true : undefined}
                          required={field.include}
                          disabled={!field.include}
                          value={field.target}
                          onInput={(e) => setField(i, j, { target: e.currentTarget.value })}
                        />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </fieldset>
        );
      })}
      <button type="submit" class="primary" disabled={save.busy}>
        Save plan and reload
      </button>
      <ErrorNote error={save.error} />
    </form>
  );
}

function History({ workspace, job }: { workspace: string; job: ImportJob }) {
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

function RollbackProgress({ id }: { id: string }) {
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

export function ImportPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const id = params.import as string;
  const job = usePolled(
    () => call(api.GET('/api/v1/workspaces/{workspace}/imports/{import}', importPath(workspace, id))),
    [workspace, id],
    working,
  );
  const [notice, setNotice] = useState<string>();
  const [confirm, setConfirm] = useState<'cancel' | 'rollback'>();
  const [rollbackId, setRollbackId] = useState<string>();

  const after = (answer: ImportJob | undefined, message: string) => {
    if (answer) job.set(answer);
    setNotice(message);
    job.reload();
  };
  const start = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/start', importPath(workspace, id)),
    );
    after(answer, `Started: the import is ${statusText(answer.status)}.`);
  });
  const publish = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/publish', importPath(workspace, id)),
    );
    after(answer, 'Publishing: the staged layers become a service.');
  });
  const retry = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/retry', importPath(workspace, id)),
    );
    after(answer, `Retried: the import is ${statusText(answer.status)}.`);
  });
  const cancel = useAction(async () => {
    setConfirm(undefined);
    const version = job.data?.version;
    const result = await api.DELETE('/api/v1/workspaces/{workspace}/imports/{import}', {
      params: {
        path: { workspace, import: id },
        ...(version !== undefined ? { header: { 'If-Match': `"${version}"` } } : {}),
      },
    });
    const answer = await call(Promise.resolve(result));
    after(
      result.response.status === 202 ? (answer as ImportJob) : undefined,
      result.response.status === 204 ? 'Cancelled.' : 'Cancelling: the staged data is dropped.',
    );
  });
  const rollback = useAction(async () => {
    setConfirm(undefined);
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/rollback', importPath(workspace, id)),
    );
    if (answer.rollback_operation_id) setRollbackId(answer.rollback_operation_id);
    after(answer, 'Rolling back: the service, its layers and tables are taken away.');
  });

  const data = job.data;
  // Say so when the workflow stops while the page follows it (published, failed, rolled back…).
  const followed = useRef<ImportStatus>();
  useEffect(() => {
    if (!data) return;
    if (followed.current && WORKING.includes(followed.current) && !working(data))
      setNotice(`The import is ${statusText(data.status)}.`);
    followed.current = data.status;
  }, [data?.status]);
  const live = useLiveServices(workspace, data ? [data] : []);
  const operationId = data?.rollback_operation_id ?? rollbackId;
  const title = data ? `Import ${data.name}` : 'Import';
  const editable =
    data &&
    ['awaiting_plan', 'ready_to_publish', 'failed'].includes(data.status) &&
    !data.service_id &&
    data.discovery !== undefined;
  return (
    <>
      <PageTitle title={`${title} · ${workspace}`}>{title}</PageTitle>
      <p>
        <a href={paths.imports(workspace)}>All imports in {workspace}</a>
      </p>
      {data ? (
        <>
          <section aria-labelledby="status-heading">
            <h2 id="status-heading">Status</h2>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <StatusBadge status={data.status} />
              </dd>
              <dt>Phase</dt>
              <dd>{data.phase}</dd>
              <dt>Source</dt>
              <dd>{data.source_filename ?? data.source_uri}</dd>
              <dt>Service</dt>
              <dd>
                <ServiceOf workspace={workspace} job={data} live={live} />
              </dd>
              <dt>Publish when loaded</dt>
              <dd>{data.auto_publish ? 'yes' : 'no'}</dd>
              {data.rollback_until ? (
                <>
                  <dt>Previous data kept until</dt>
                  <dd>
                    <When at={data.rollback_until} /> (a rollback restores it until then)
                  </dd>
                </>
              ) : null}
              <dt>Created</dt>
              <dd>
                <When at={data.created_at} /> by <code>{data.created_by}</code>
              </dd>
              <dt>Started</dt>
              <dd>
                <When at={data.started_at} />
              </dd>
              <dt>Completed</dt>
              <dd>
                <When at={data.completed_at} />
              </dd>
              <dt>Retries</dt>
              <dd>{data.retry_count}</dd>
              <dt>Version</dt>
              <dd>{data.version}</dd>
            </dl>
            <JobProgress job={data} />
            {data.status === 'awaiting_upload' ? (
              <p>
                Waiting for its file. The upload ticket is given once, when the import is created: if the
                upload was lost, cancel this import and start a new one.
              </p>
            ) : null}
            {data.status === 'failed' ? (
              <div class="error" role="alert">
                <p class="error-title">
                  <strong>The import failed</strong> in phase {data.phase}.
                </p>
                {data.error_message ? <p class="error-detail">{data.error_message}</p> : null}
              </div>
            ) : null}
            {data.warnings?.length ? (
              <div class="warnings">
                <p>Warnings:</p>
                <ul>
                  {data.warnings.map((w) => (
                    <li key={w}>{w}</li>
                  ))}
                </ul>
              </div>
            ) : null}
            <Notice>{notice}</Notice>
          </section>

          <section aria-labelledby="actions-heading">
            <h2 id="actions-heading">Actions</h2>
            <div class="actions">
              {data.status === 'awaiting_upload' ? (
                <button type="button" disabled={start.busy} onClick={() => void start.run()}>
                  Start loading
                </button>
              ) : null}
              {data.status === 'ready_to_publish' ? (
                <button
                  type="button"
                  class="primary"
                  disabled={publish.busy}
                  onClick={() => void publish.run()}
                >
                  Publish
                </button>
              ) : null}
              {data.status === 'failed' ? (
                <button type="button" class="primary" disabled={retry.busy} onClick={() => void retry.run()}>
                  Retry
                </button>
              ) : null}
              {data.status === 'published' ? (
                <button
                  type="button"
                  class="danger"
                  disabled={rollback.busy}
                  onClick={() => setConfirm('rollback')}
                >
                  Roll back…
                </button>
              ) : null}
              {!NOT_CANCELLABLE.includes(data.status) ? (
                <button
                  type="button"
                  class="danger"
                  disabled={cancel.busy}
                  onClick={() => setConfirm('cancel')}
                >
                  Cancel import…
                </button>
              ) : null}
            </div>
            {WORKING.includes(data.status) && data.status !== 'rolling_back' ? (
              <p>The workflow is working on the import; this page follows it.</p>
            ) : null}
            {['cancelled', 'rolled_back'].includes(data.status) ? <p>Nothing is left to do.</p> : null}
            <ErrorNote error={start.error} />
            <ErrorNote error={publish.error} />
            <ErrorNote error={retry.error} />
            <ErrorNote error={cancel.error} />
            <ErrorNote error={rollback.error} />
            {operationId ? <RollbackProgress id={operationId} /> : null}
          </section>

          <section aria-labelledby="discovery-heading">
            <h2 id="discovery-heading">What the file holds</h2>
            <Discovery job={data} />
          </section>

          <section aria-labelledby="preview-heading">
            <h2 id="preview-heading">Preview</h2>
            <Preview workspace={workspace} job={data} />
          </section>

          <section aria-labelledby="plan-heading">
            <h2 id="plan-heading">Plan</h2>
            {editable ? (
              <PlanForm
                key={data.version}
                workspace={workspace}
                job={data}
                onSaved={(updated) =>
                  after(
                    updated,
                    updated.status === 'failed'
                      ? 'Plan saved; retry the import to load with it.'
                      : `Plan saved; the import is ${statusText(updated.status)} to load with it.`,
                  )
                }
              />
            ) : data.plan ? (
              <>
                <p>The plan can change while the import awaits a plan, is ready to publish or failed.</p>
                <ul>
                  {data.plan.layers.map((l) => (
                    <li key={l.public_id}>
                      {l.source_layer} →{' '}
                      {l.target ? `${l.target.mode === 'replace' ? 'replaces' : 'appends to'} ` : ''}
                      <strong>{l.public_id}</strong>:{' '}
                      {l.fields
                        .filter((f) => f.include)
                        .map((f) => f.target)
                        .join(', ')}
                      {l.target_srid ? ` (EPSG:${l.target_srid})` : ''}
                      {l.make_valid ? ', made valid' : ''}
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <p>No plan yet: discovery suggests one once the file is read.</p>
            )}
          </section>

          <section aria-labelledby="history-heading">
            <h2 id="history-heading">History</h2>
            <History workspace={workspace} job={data} />
          </section>

          <Confirm
            open={confirm === 'cancel'}
            title={`Cancel import ${data.name}?`}
            confirmLabel="Cancel the import"
            danger
            onConfirm={() => void cancel.run()}
            onCancel={() => setConfirm(undefined)}
          >
            <p>Its staged data is dropped; the file would have to be uploaded again.</p>
          </Confirm>
          <Confirm
            open={confirm === 'rollback'}
            title={`Roll back import ${data.name}?`}
            confirmLabel="Roll back"
            danger
            onConfirm={() => void rollback.run()}
            onCancel={() => setConfirm(undefined)}
          >
            <p>
              Service <strong>{data.service_name}</strong>, its layers, the layer groups containing them and
              the import's tables are deleted.
            </p>
          </Confirm>
        </>
      ) : job.loading ? (
        <p>Loading…</p>
      ) : null}
      <ErrorNote error={job.error} />
    </>
  );
}
