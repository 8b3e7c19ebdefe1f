/**
 * A new import: drop or choose a file → createImport → the file POSTed to its upload ticket with the
 * bytes shown as they go → startImport, then the import followed as it goes.
 */
import { useId, useState } from 'preact/hooks';
import { api, call } from '#console/api.ts';
import { Loaded, useLoad, usePolled } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor, TextInput } from '#console/components/forms.tsx';
import { Progress, StatusBadge } from '#console/components/page-parts.tsx';
import { bytesOf, formatBytes } from '#console/format.ts';
import { paths } from '#console/routes.ts';

import { crossOrigin, type UploadTicket, uploadFile } from '../import-upload.ts';
import { type ImportJob, importPath, working } from './import-status.ts';

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

export function NewImport({ workspace, onStarted }: { workspace: string; onStarted: () => void }) {
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
