/**
 * What every chunked background job shares (mosaic harvest jobs, ADR 0136; tile cache jobs, ADR
 * 0139): the statuses and the changes between them, when a job counts as lost, and the bounded
 * concurrency its chunks run with.
 */

import { type ErrorReason, StateConflictError } from './errors.ts';
import { checkVersion } from './workspaces.ts';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/** Why a job ended `failed`. */
export interface JobError {
  reason: string;
  message: string;
}

/** What every job item carries besides its own definition and progress. */
export interface JobRecord {
  id: string;
  workspace_id: string;
  status: JobStatus;
  cancel_requested: boolean;
  /** Where the next chunk starts (each kind of job says what it holds). */
  cursor?: string;
  /** The run the scheduled sweep last started (a lost execution restarted; ADR 0093); 1 when absent. */
  run?: number;
  error?: JobError;
  /** Changes with the status and a cancel request, not with progress (its ETag for If-Match). */
  version: number;
  created_at: string;
  updated_at: string;
  started_at?: string;
  finished_at?: string;
}

/** Port: the transitions every job store makes, each one conditional write (false: the condition failed). */
export interface JobTransitions<J> {
  /** Sets `cancel_requested` IF the job is unfinished at `version`; false when that condition failed. */
  requestCancel(job: J, now: string): Promise<boolean>;
  /** queued → running IF still queued; false otherwise. */
  markRunning(job: J, now: string): Promise<boolean>;
  /** Unfinished → `status` (final), the marker released; false when the job was already finished. */
  finish(job: J, status: JobStatus, now: string, error?: JobError): Promise<boolean>;
  /** Every queued or running job (the local host resumes them after a restart). */
  working(fn: (job: J) => Promise<void>): Promise<void>;
}

/** The status changes a job may make; the finished statuses are final. */
const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ['running', 'cancelled', 'failed'],
  running: ['succeeded', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/** Whether `from → to` is a status change a job may make. */
export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Whether the job has finished (nothing will change it any more). */
export function isFinished(status: JobStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

/**
 * A job that committed nothing for this long has no live execution (a step commits at least one
 * chunk a minute; its Lambda times out after 3): a cancel then ends it itself, so a lost execution
 * can't hold its marker for ever. Chunk commits are conditioned on `running`, so a late execution
 * changes nothing after that.
 */
export const STALE_JOB_MS = 15 * 60_000;

/** Whether the job has committed nothing for {@link STALE_JOB_MS}. */
export function isStale(job: { updated_at: string }, now: Date): boolean {
  return now.getTime() - Date.parse(job.updated_at) > STALE_JOB_MS;
}

/** The run of a job's current execution: 1 until the scheduled sweep restarts it (ADR 0093). */
export function jobRun(job: { run?: number }): number {
  return job.run ?? 1;
}

/**
 * The execution name of a job's current run: its id, then `<id>-run-<n>` — a restart needs a new
 * name, since Step Functions refuses a closed execution's name (ExecutionAlreadyExists).
 */
export function jobExecutionName(job: { id: string; run?: number }): string {
  const run = jobRun(job);
  return run <= 1 ? job.id : `${job.id}-run-${run}`;
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** How the use cases and the sweep name one kind of job in what they answer and record. */
export interface JobNames {
  /** The job at the start of a sentence (`Tile cache job`). */
  name: string;
  /** The 409's reason when a finished job is asked to cancel. */
  finished: ErrorReason;
  /** Its workflow (`the tile cache workflow could not be started`). */
  workflow: string;
  /** The `error.reason` of a job its workflow or the sweep gives up on. */
  failed: string;
}

/**
 * Starts the workflow of a job just created; a workflow that can't be started fails the job at
 * once, so its marker doesn't block the next one.
 */
export async function startJob<J extends JobRecord>(
  store: Pick<JobTransitions<J>, 'finish'>,
  kind: JobNames,
  job: J,
  start: () => Promise<void>,
): Promise<J> {
  try {
    await start();
  } catch (error) {
    await store.finish(job, 'failed', new Date().toISOString(), {
      reason: 'workflow_unavailable',
      message: `The ${kind.workflow} workflow could not be started.`,
    });
    throw error;
  }
  return job;
}

/**
 * Asks an unfinished job to stop: the next chunk sees the flag and the job ends `cancelled` with
 * the progress it had. Asking again answers as before; a finished job is a 409; a stale job (no
 * live execution) is ended `cancelled` at once. `read` is the job (404 when it isn't there),
 * `reload` it again after it was ended.
 */
export async function cancelJob<J extends JobRecord>(
  store: JobTransitions<J>,
  kind: JobNames,
  job: { read(): Promise<J>; reload(job: J): Promise<J | undefined> },
  ifMatch: string | undefined,
  now: Date,
): Promise<J> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await job.read();
    checkVersion(current, ifMatch);
    if (isFinished(current.status)) {
      throw new StateConflictError(
        kind.finished,
        `${kind.name} '${current.id}' is already ${current.status}; only a queued or running job can be cancelled.`,
      );
    }
    if (isStale(current, now)) {
      if (await store.finish(current, 'cancelled', now.toISOString())) {
        return (await job.reload(current)) ?? current;
      }
      continue;
    }
    if (current.cancel_requested) return current;
    if (await store.requestCancel(current, now.toISOString())) {
      return {
        ...current,
        cancel_requested: true,
        version: current.version + 1,
        updated_at: now.toISOString(),
      };
    }
  }
  throw new StateConflictError(
    'concurrent_modification',
    `The ${kind.name.toLowerCase()} kept changing; retry.`,
  );
}

/**
 * The job a step goes on with: a queued job is marked running first (or ended `cancelled` when a
 * cancel came before it started); undefined when there is nothing left to run.
 */
export async function startedJob<J extends JobRecord>(
  store: Pick<JobTransitions<J>, 'finish' | 'markRunning'>,
  job: J,
  load: () => Promise<J | undefined>,
  now: () => string,
): Promise<J | undefined> {
  if (job.status !== 'queued') return job;
  if (job.cancel_requested) {
    await store.finish(job, 'cancelled', now());
    return undefined;
  }
  await store.markRunning(job, now());
  const started = await load();
  return started && !isFinished(started.status) ? started : undefined;
}

/** The workflow's failure path: an unfinished job ends `failed` with the reason; what it did stays. */
export async function failJob<J extends JobRecord>(
  store: Pick<JobTransitions<J>, 'finish'>,
  kind: JobNames,
  job: J | undefined,
  message: string,
  now: Date,
): Promise<void> {
  if (!job || isFinished(job.status)) return;
  await store.finish(job, 'failed', now.toISOString(), {
    reason: kind.failed,
    message: message.slice(0, 1000),
  });
}
