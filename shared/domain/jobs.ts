/**
 * What every chunked background job shares (mosaic harvest jobs, ADR 0136; tile cache jobs, ADR
 * 0139): the statuses and the changes between them, when a job counts as lost, and the bounded
 * concurrency its chunks run with.
 */

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

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
