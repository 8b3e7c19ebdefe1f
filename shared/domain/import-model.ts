/**
 * The import job and its history as data, with the rules over them (ADR 0083): which statuses
 * allow which request, what is presented. `imports.ts` holds the use cases.
 */
import { randomBytes } from 'node:crypto';
import { isJobFailureReason, type JobFailureReason } from './error-reasons.ts';
import { DomainError } from './errors.ts';
import { REASON_CODE_PATTERN } from './identifiers.ts';
import { type Discovery, ImportInputError, type ImportPlan, type LayerTarget } from './import-sources.ts';

export type ImportStatus =
  | 'awaiting_upload'
  | 'queued'
  | 'running'
  | 'awaiting_plan'
  | 'ready_to_publish'
  | 'publishing'
  | 'published'
  | 'cancelling'
  | 'cancelled'
  | 'failed'
  | 'rolling_back'
  | 'rolled_back';

export const IMPORT_STATUSES: readonly ImportStatus[] = [
  'awaiting_upload',
  'queued',
  'running',
  'awaiting_plan',
  'ready_to_publish',
  'publishing',
  'published',
  'cancelling',
  'cancelled',
  'failed',
  'rolling_back',
  'rolled_back',
];

export type ImportPhase = 'upload' | 'acquire' | 'discover' | 'transform' | 'publish' | 'rollback';

export const IMPORT_PHASES: readonly ImportPhase[] = [
  'upload',
  'acquire',
  'discover',
  'transform',
  'publish',
  'rollback',
];

/** Statuses in which a workflow execution owns the job (the host resumes them after a restart). */
export const WORKING_STATUSES: readonly ImportStatus[] = [
  'queued',
  'running',
  'publishing',
  'cancelling',
  'rolling_back',
];

/** Where the file comes from. */
export type ImportSourceInput =
  | { kind: 'upload'; filename: string; size_bytes?: number }
  | { kind: 'uri'; uri: string };

/**
 * A name the import would publish that the workspace already uses (ADR 0126): a layer's public id
 * (the public-id namespace of layers and groups) or the service name, and a free name proposed in
 * its place. `renamed`: auto_publish took the proposal itself.
 */
export interface NameClash {
  kind: 'public_id' | 'service_name';
  name: string;
  proposed: string;
  /** The plan layer's source layer (public ids). */
  source_layer?: string;
  renamed?: boolean;
}

/** A target name given at createImport (ADR 0126): the public id of a source layer (default: the first). */
export interface RequestedLayerName {
  source_layer?: string;
  /** A new layer's public id; or */
  public_id?: string;
  /** an existing layer to replace or append to (ADR 0127). */
  target?: LayerTarget;
}

/** The durable record of an import (ImportJob of the spec, plus internal fields). */
export interface ImportJob {
  id: string;
  workspace_id: string;
  name: string;
  source_kind: 'upload' | 'uri';
  source_filename?: string;
  /** uri sources: the URI as given. */
  source_uri?: string;
  /** The object key (upload store) or local path / s3 URI the workflow reads. */
  source_location: string;
  /** The upload's identity when startImport sealed it: the workflow reads exactly that (ADR 0106). */
  source_etag?: string;
  status: ImportStatus;
  phase: ImportPhase;
  plan?: ImportPlan;
  discovery?: Discovery;
  /** The service a publish creates (given at creation, or changed by a plan or auto_publish). */
  service_name: string;
  /** Public ids asked for at creation: the default plan takes them (ADR 0126). */
  requested_layers?: RequestedLayerName[];
  /** Names taken in the workspace that the plan or the service name used (ADR 0126). */
  clashes?: NameClash[];
  service_id?: string;
  rollback_operation_id?: string;
  /**
   * An import that replaced a layer's data (ADR 0127): the previous data is kept until then; a
   * rollback after it is refused (the next publish or rollback drops what expired).
   */
  rollback_until?: string;
  /** What the teardown (rollback or cancel after a partial publish) ends in. */
  teardown_to?: 'rolled_back' | 'cancelled';
  auto_publish: boolean;
  max_bytes: number;
  upload_expires_at?: string;
  processed_bytes: number;
  processed_features: number;
  processed_layers: number;
  total_layers: number;
  retry_count: number;
  warnings?: string[];
  /** Why the import failed, for a user: never an internal detail (ADR 0110). */
  error_message?: string;
  /**
   * The stable snake_case code of the failure (an `ImportFailure` reason). Written as a
   * JobFailureReason (`advance` takes only those); read back as the record holds it, since a
   * record of an older version may hold a reason since renamed.
   */
  error_reason?: string;
  /**
   * What the import holds of its workspace's import quota (ADR 0110): reserved when a load starts,
   * released when its staged or published data is dropped. The workspace's sum is kept beside it.
   */
  reserved_rows?: number;
  reserved_bytes?: number;
  /** The staged tables must be dropped before the next load (the plan changed). */
  reload?: boolean;
  /** Execution counter: every start of the workflow gets the next run; older runs stop. */
  run: number;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  started_at?: string;
  completed_at?: string;
}

/** One immutable history event (spec 4.14). */
export interface ImportEvent {
  id: string;
  import_id: string;
  status: ImportStatus;
  phase: ImportPhase;
  created_at: string;
  processed_bytes: number;
  processed_features: number;
  processed_layers: number;
  warnings?: string[];
  clashes?: NameClash[];
  error_message?: string;
  error_reason?: string;
}

/** Progress fields a running step updates without a history event. */
export type ImportProgress = Pick<
  ImportJob,
  'processed_bytes' | 'processed_features' | 'processed_layers' | 'total_layers'
>;

/** Input of the import workflow. */
export interface ImportWorkflowInput {
  import_id: string;
  workspace_id: string;
  run: number;
}

/** The execution name of a run: unique per import and run (Step Functions keeps names 90 days). */
export function importExecutionName(job: Pick<ImportJob, 'id' | 'run'>): string {
  return `import-${job.id}-${job.run}`;
}

/** True when the job's history gets an event for the change from `a` to `b`. */
export function isEventWorthy(a: ImportJob | undefined, b: ImportJob): boolean {
  return (
    !a ||
    a.status !== b.status ||
    a.phase !== b.phase ||
    (a.error_message ?? '') !== (b.error_message ?? '') ||
    (a.error_reason ?? '') !== (b.error_reason ?? '')
  );
}

/** The history event that snapshots `job` as it is now. */
export function eventOf(job: ImportJob): ImportEvent {
  return {
    id: `${job.id}.${String(job.version).padStart(6, '0')}`,
    import_id: job.id,
    status: job.status,
    phase: job.phase,
    created_at: job.updated_at,
    processed_bytes: job.processed_bytes,
    processed_features: job.processed_features,
    processed_layers: job.processed_layers,
    ...(job.warnings?.length ? { warnings: job.warnings } : {}),
    ...(job.clashes?.length ? { clashes: job.clashes } : {}),
    ...(job.error_message ? { error_message: job.error_message } : {}),
    ...(job.error_reason ? { error_reason: job.error_reason } : {}),
  };
}

/**
 * A time-ordered UUID (version 7: 48-bit milliseconds, then random), so a workspace's imports sort
 * by creation in the table and the listing is newest first without an index.
 */
export function timeOrderedId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x70, 6);
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A discovery as the API shows it: each layer without what only the loader reads. */
function presentDiscovery(discovery: Discovery): Discovery {
  return {
    ...discovery,
    layers: discovery.layers.map(({ geometry_dims: _, geometry_valid: __, ...layer }) => layer),
  };
}

/** The ImportJob of the API: internal fields left out. */
export function presentImport(job: ImportJob, upload?: ImportUploadTicket) {
  return {
    id: job.id,
    workspace_id: job.workspace_id,
    name: job.name,
    source_kind: job.source_kind,
    ...(job.source_filename ? { source_filename: job.source_filename } : {}),
    ...(job.source_uri ? { source_uri: job.source_uri } : {}),
    status: job.status,
    phase: job.phase,
    ...(job.plan ? { plan: job.plan } : {}),
    ...(job.discovery ? { discovery: presentDiscovery(job.discovery) } : {}),
    service_name: job.service_name,
    ...(job.requested_layers?.length ? { requested_layers: job.requested_layers } : {}),
    ...(job.clashes?.length ? { clashes: job.clashes } : {}),
    ...(job.service_id ? { service_id: job.service_id } : {}),
    ...(job.rollback_operation_id ? { rollback_operation_id: job.rollback_operation_id } : {}),
    ...(job.rollback_until ? { rollback_until: job.rollback_until } : {}),
    auto_publish: job.auto_publish,
    processed_bytes: job.processed_bytes,
    processed_features: job.processed_features,
    processed_layers: job.processed_layers,
    total_layers: job.total_layers,
    retry_count: job.retry_count,
    ...(job.warnings?.length ? { warnings: job.warnings } : {}),
    ...(job.error_message ? { error_message: publicErrorText(job.error_message) } : {}),
    ...(job.error_reason ? { error_reason: job.error_reason } : {}),
    ...(upload ? { upload } : {}),
    version: job.version,
    created_by: job.created_by,
    created_at: job.created_at,
    updated_at: job.updated_at,
    ...(job.started_at ? { started_at: job.started_at } : {}),
    ...(job.completed_at ? { completed_at: job.completed_at } : {}),
  };
}

/** What a client needs to upload the file: a form POST (S3 presigned POST, or the local host's). */
export interface ImportUploadTicket {
  url: string;
  method: 'POST';
  fields: Record<string, string>;
  file_field: 'file';
  expires_at: string;
  max_bytes: number;
}

/** A history event as the API shows it (its error read through `publicErrorText`, as the job's is). */
export function presentEvent(event: ImportEvent): ImportEvent {
  const { error_message, ...rest } = event;
  return error_message ? { ...rest, error_message: publicErrorText(error_message) } : rest;
}

/**
 * Why an import failed, as the job records it (ADR 0110): `reason` and `message` are for the
 * user; `detail` (what went wrong underneath, with whatever internal names it holds) only goes to
 * the log.
 */
export interface ImportFailure {
  reason: JobFailureReason;
  message: string;
  detail?: string;
}

/** Longest error_message stored. */
const MAX_ERROR_MESSAGE = 2000;

/**
 * A failure text with internal details taken out (ADR 0110): stack frames, connection URLs, the
 * import database's schema names, login and role names, network addresses (`host:port`, IP
 * addresses) and absolute file system paths (their last segment stays). A user's file names,
 * layers, fields, features and CRSs (`EPSG:4326`) pass unchanged. Applied where a failure becomes
 * the job's error and again when it is shown (for jobs recorded before this rule).
 */
export function publicErrorText(text: string): string {
  return text
    .replace(/\n\s*at\s[\s\S]*$/, '')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"@/]*@[^\s'")]*/gi, '[address]')
    .replace(/\bpostgres(?:ql)?:\/\/[^\s'")]*/gi, '[address]')
    .replace(/\bimport(?:_staging)?_[0-9a-f]{32}\b\.?/gi, '')
    .replace(/\b(user|role|login|database|schema)\s+"[^"]*"/gi, '$1 [name]')
    .replace(/\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi, '[address]')
    .replace(
      /\b(?:\d{1,3}(?:\.\d{1,3}){3}|localhost|(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*):\d{1,5}(?:\/[\w$.-]+)?/gi,
      '[address]',
    )
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g, '[address]')
    .replace(
      /\b(?:connect\s+|getaddrinfo\s+)?E(?:CONNREFUSED|CONNRESET|TIMEDOUT|HOSTUNREACH|NETUNREACH|AI_AGAIN|PIPE|NOTFOUND)\b(?:\s+\[address\])?/g,
      'the connection failed',
    )
    .replace(/(^|[\s'"(=,:])\/(?:[^\s'"():,/]+\/)+([^\s'"():,/]+)/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_ERROR_MESSAGE);
}

/** The user's message for failures whose own message may hold internal details, by reason. */
const FAILURE_MESSAGES: Partial<Record<JobFailureReason, string>> = {
  import_database_unavailable:
    'The import database stayed unavailable, so the import stopped. Retry it once the database is back.',
  source_unavailable:
    "The import's file couldn't be read from storage, so the import stopped. Retry it later.",
  upload_store_unavailable:
    "The import's file couldn't be read from storage, so the import stopped. Retry it later.",
  store_unavailable: 'The catalog store stayed unavailable, so the import stopped. Retry it later.',
  datasource_unavailable:
    "The published service's database stayed unavailable, so the import stopped. Retry it later.",
  workflow_unavailable: 'A workflow could not be started, so the import stopped. Retry it later.',
  dependency_unavailable:
    'A service the import depends on stayed unavailable, so the import stopped. Retry it later.',
  import_step_timeout: 'A step of the import ran out of time and was stopped. Retry the import.',
  item_too_large:
    "The file's description (its layers and fields) is too large to record; split the file or import fewer layers.",
  internal_error:
    "The import failed on an internal error; the details are in the service's logs. Retry the import, and if it fails again, give the operator the import's id.",
};

/** Words of a failure's message that name its way out: a plan change, a retry, or what to do instead. */
const WAY_OUT = /PUT …\/plan|\bretry\b|\bnew import\b|\bsplit the file\b/i;

/**
 * A failure's message with its way out named (issue 25: no failed import is a dead end). A message
 * that names none (a file's defect says what is wrong, not what to do) gets its phase's: before the
 * file was read to the end there is no plan to change — an upload can't be replaced, so a new
 * import takes the corrected file, and a URI is read again by a retry; a failed load takes a plan
 * change (a layer left out, its CRS or encoding given) and a retry. A publish's or a rollback's
 * messages name theirs where they are made.
 */
export function withWayOut(
  job: Pick<ImportJob, 'phase' | 'discovery' | 'source_kind'>,
  message: string,
): string {
  if (WAY_OUT.test(message) || job.phase === 'publish' || job.phase === 'rollback') return message;
  if (!job.discovery) {
    return job.source_kind === 'uri'
      ? `${message} Correct the file at its URL and retry the import, or create a new import.`
      : `${message} A plan can't change the file: correct it and create a new import with it.`;
  }
  return `${message} Change the plan (PUT …/plan) and retry the import, or create a new import with a corrected file.`;
}

/** Step Functions' names of a task that ran out of time. */
const TIMEOUTS = new Set(['States.Timeout', 'States.HeartbeatTimeout', 'Sandbox.Timedout']);

/** The failure of `reason` with its fixed message (a reason without one reads as an internal error). */
function failureOfReason(reason: string, unavailable: boolean, detail?: string): ImportFailure {
  const known = REASON_CODE_PATTERN.test(reason) && isJobFailureReason(reason) ? reason : undefined;
  const code = known ?? (unavailable ? 'dependency_unavailable' : 'internal_error');
  const message =
    FAILURE_MESSAGES[code] ??
    (unavailable ? FAILURE_MESSAGES.dependency_unavailable : FAILURE_MESSAGES.internal_error);
  return { reason: code, message: message as string, ...(detail ? { detail } : {}) };
}

/** What went wrong underneath, for the log (never stored). */
function detailOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * The failure a thrown error means for the user (ADR 0110): a bad file or plan
 * (`ImportInputError`) keeps its message, internal details taken out; an outage is named by its
 * reason with a fixed message; anything else is an internal error whose text stays in the log.
 */
export function importFailureOf(error: unknown): ImportFailure {
  if (error instanceof ImportInputError) {
    return {
      reason: REASON_CODE_PATTERN.test(error.code) ? error.code : 'invalid_file',
      message: publicErrorText(error.message),
      ...(error.cause !== undefined ? { detail: detailOf(error.cause) } : {}),
    };
  }
  const detail = detailOf(error);
  if (error instanceof DomainError)
    return failureOfReason(error.reason, error.name === 'UnavailableError', detail);
  if (error instanceof Error && error.name === 'TransientError')
    return failureOfReason('dependency_unavailable', true, detail);
  return failureOfReason('internal_error', false, detail);
}

/**
 * Prefix of a task error's message that carries only the failure's reason through the workflow
 * (`carriedReason`), so the state machine's history and the failure recorder never see the text.
 */
export const REASON_MARK = 'geoplane-reason:';

/**
 * The failure the import workflow's Catch hands its recorder (`{Error, Cause}`; on AWS the cause
 * is Lambda's JSON with `errorMessage`): a reason the step carried (`REASON_MARK`), else what the
 * error's name tells (an outage, a timeout), else an internal error. The cause's text is never
 * shown; it is the detail for the log.
 */
export function taskFailureOf(error: { Error?: string; Cause?: string } | undefined): ImportFailure {
  const name = error?.Error ?? 'Error';
  let cause = error?.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') cause = parsed.errorMessage;
  } catch {
    // Not JSON: the message itself.
  }
  const detail = `${name}: ${cause}`.trim();
  const unavailable = name === 'TransientError' || name === 'UnavailableError';
  if (cause.startsWith(REASON_MARK))
    return failureOfReason(cause.slice(REASON_MARK.length).trim(), unavailable, detail);
  if (unavailable) return failureOfReason('dependency_unavailable', true, detail);
  if (TIMEOUTS.has(name) || /\btimed? ?out\b/i.test(name))
    return failureOfReason('import_step_timeout', false, detail);
  return failureOfReason('internal_error', false, detail);
}
