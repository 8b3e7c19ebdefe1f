/**
 * The import job and its history as data, with the rules over them (ADR 0083): which statuses
 * allow which request, what is presented. `imports.ts` holds the use cases.
 */
import { randomBytes } from 'node:crypto';
import type { Discovery, ImportPlan } from './import-sources.ts';

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
  status: ImportStatus;
  phase: ImportPhase;
  plan?: ImportPlan;
  discovery?: Discovery;
  /** The service a publish creates (name fixed at creation). */
  service_name: string;
  service_id?: string;
  rollback_operation_id?: string;
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
  error_message?: string;
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
  error_message?: string;
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
    !a || a.status !== b.status || a.phase !== b.phase || (a.error_message ?? '') !== (b.error_message ?? '')
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
    ...(job.error_message ? { error_message: job.error_message } : {}),
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
    ...(job.discovery ? { discovery: job.discovery } : {}),
    service_name: job.service_name,
    ...(job.service_id ? { service_id: job.service_id } : {}),
    ...(job.rollback_operation_id ? { rollback_operation_id: job.rollback_operation_id } : {}),
    auto_publish: job.auto_publish,
    processed_bytes: job.processed_bytes,
    processed_features: job.processed_features,
    processed_layers: job.processed_layers,
    total_layers: job.total_layers,
    retry_count: job.retry_count,
    ...(job.warnings?.length ? { warnings: job.warnings } : {}),
    ...(job.error_message ? { error_message: job.error_message } : {}),
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
