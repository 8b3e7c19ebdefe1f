import { ApiError, type GeoPlaneClient } from './client.ts';
import { CliError } from './config.ts';
import type { Bar, Output, Unit } from './progress.ts';
import { line } from './terminal.ts';
import type { DeletionOperation, ImportJob, ImportStatus } from './types.ts';

/** Statuses in which the workflow is still working on the import (or is about to). */
const WORKING: ReadonlySet<ImportStatus> = new Set<ImportStatus>([
  'queued',
  'running',
  'publishing',
  'cancelling',
  'rolling_back',
]);

export function isWorking(status: ImportStatus): boolean {
  return WORKING.has(status);
}

export interface PollOptions {
  /** Milliseconds between polls. */
  intervalMs: number;
  /** Milliseconds to wait at most (none: forever). */
  timeoutMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the import bar counts: features against the discovered total when known, else bytes. */
export function importProgress(
  job: ImportJob,
  fileSize?: number,
): { value: number; total: number; unit: Unit } {
  const features = (job.discovery?.layers ?? []).reduce(
    (sum, layer) => sum + Math.max(0, layer.feature_count),
    0,
  );
  // Loaded is all of it: the load's counters need not reach the discovered totals (its byte count is
  // its own pass over the file), and a finished import must not end its bar short.
  const loaded = ['ready_to_publish', 'publishing', 'published'].includes(job.status);
  if (features > 0)
    return {
      value: loaded ? features : Math.min(job.processed_features, features),
      total: features,
      unit: 'features',
    };
  const bytes = job.discovery?.size_bytes ?? fileSize ?? 0;
  return {
    value:
      loaded && bytes > 0 ? bytes : bytes > 0 ? Math.min(job.processed_bytes, bytes) : job.processed_bytes,
    total: bytes,
    unit: 'bytes',
  };
}

function statusText(job: ImportJob): string {
  const layers =
    job.total_layers > 0
      ? `, layer ${Math.min(job.processed_layers + 1, job.total_layers)}/${job.total_layers}`
      : '';
  return job.status === 'running' || job.status === 'publishing'
    ? `${job.status} (${job.phase}${layers})`
    : `${job.status} (${job.phase})`;
}

function deadlineCheck(options: PollOptions, what: () => string): () => void {
  const started = Date.now();
  return () => {
    if (options.timeoutMs !== undefined && Date.now() - started >= options.timeoutMs)
      throw new CliError(
        line`timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ` + what(),
      );
  };
}

/**
 * Polls an import until the workflow stops working on it (published, ready_to_publish,
 * awaiting_plan, failed, cancelled, rolled_back), showing its progress. Returns the last read.
 */
export async function followImport(
  client: GeoPlaneClient,
  workspace: string,
  initial: ImportJob,
  out: Output,
  options: PollOptions & { fileSize?: number },
): Promise<ImportJob> {
  let job = initial;
  const first = importProgress(job, options.fileSize);
  const bar: Bar = out.bar('import', first.total, first.unit, statusText(job));
  const check = deadlineCheck(options, () => line`import ${job.id} (${job.status}, ${job.phase})`);
  try {
    for (;;) {
      const p = importProgress(job, options.fileSize);
      bar.update(p.value, { total: p.total, unit: p.unit, text: statusText(job) });
      if (!isWorking(job.status) && job.status !== 'awaiting_upload') return job;
      check();
      await sleep(options.intervalMs);
      job = await client.getImport(workspace, job.id);
    }
  } finally {
    bar.stop();
  }
}

/**
 * Follows a rollback: the deletion operation's `deleted/total` as a bar, then the import until
 * it is rolled_back (or failed).
 */
export async function followRollback(
  client: GeoPlaneClient,
  workspace: string,
  initial: ImportJob,
  out: Output,
  options: PollOptions,
): Promise<ImportJob> {
  let job = initial;
  const bar = out.bar('rollback', 0, 'items', statusText(job));
  const check = deadlineCheck(options, () => line`the rollback of import ${job.id} (${job.status})`);
  let deletionVisible = true;
  try {
    for (;;) {
      let deletion: DeletionOperation | undefined;
      if (job.rollback_operation_id && deletionVisible) {
        try {
          deletion = await client.getDeletionOperation(job.rollback_operation_id);
        } catch (error) {
          // Only admins of the workspace see its deletions: follow the import alone.
          if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 403)) throw error;
          deletionVisible = false;
        }
      }
      if (deletion) {
        bar.update(deletion.progress.deleted, {
          total: deletion.progress.total,
          unit: 'items',
          text: `${job.status}; deletion ${deletion.status} (${deletion.phase})`,
        });
      } else bar.update(0, { text: statusText(job) });
      if (!isWorking(job.status)) return job;
      check();
      await sleep(options.intervalMs);
      job = await client.getImport(workspace, job.id);
    }
  } finally {
    bar.stop();
  }
}
