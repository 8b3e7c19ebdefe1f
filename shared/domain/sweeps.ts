/**
 * Scheduled sweeps (ADR 0093): work a workflow owns but no longer advances — a deletion, an
 * import, a mosaic harvest job, a tile cache job — is restarted, and failed with a clear error once
 * restarts stop helping (when items expire: `expiry.ts`).
 * Pure rules over ports: the store lists and changes the items, the workflow adapters say whether
 * an execution still runs and start new ones.
 */
import { type DeletionOperation, deletionInput, executionName, isActive } from './deletion-model.ts';
import type { ImportWorkflowInput } from './import-model.ts';
import { importExecutionName, WORKING_STATUSES } from './import-model.ts';
import { advance, type ImportJob, type ImportRepository, type ImportStarter, startRun } from './imports.ts';
import { isFinished, type JobRecord, type JobTransitions, jobExecutionName, jobRun } from './jobs.ts';
import { isConcurrentModification } from './last-writer-wins.ts';
import {
  HARVEST_JOB,
  type HarvestJob,
  type HarvestStarter,
  type HarvestWorkflowInput,
} from './mosaic-harvest-jobs.ts';
import {
  TILE_CACHE_JOB,
  type TileCacheJob,
  type TileCacheStarter,
  type TileCacheWorkflowInput,
} from './tile-cache-jobs.ts';
import type { DeletionWorkflowInput, DeletionWorkflowSteps, WorkflowStarter } from './workflows.ts';

/**
 * What the sweep wrote on an item when it restarted it (the item's `sweep` attribute): how many
 * restarts in a row found no progress, the attempt (deletion) or run (import) the last one
 * started, and the item's progress at that moment.
 */
export interface SweepMark {
  restarts: number;
  attempt: number;
  progress: string;
  at: string;
}

/** An item as stored, with the sweep's mark if it ever restarted it. */
export type Swept<T> = T & { sweep?: SweepMark };

/** When work counts as stuck, and how often it is restarted before it is failed (config). */
export interface SweepSettings {
  /** No progress (its `updated_at`) for this long: stuck. */
  stuckAfterMs: number;
  /** Restarts in a row that found no progress since the previous one, before the item is failed. */
  maxRestarts: number;
}

/** Port: whether a workflow execution still runs (Step Functions' DescribeExecution; the local runner). */
export interface WorkflowExecutions {
  /** False when it finished, failed, timed out, was aborted or never started. */
  deletionRunning(name: string, input: DeletionWorkflowInput): Promise<boolean>;
  importRunning(name: string, input: ImportWorkflowInput): Promise<boolean>;
  harvestRunning(name: string, input: HarvestWorkflowInput): Promise<boolean>;
  tileCacheJobRunning(name: string, input: TileCacheWorkflowInput): Promise<boolean>;
}

/** A job of the job loop (ADR 0136, 0139) as the sweep sees it. */
export type LoopJob = Pick<JobRecord, 'id' | 'workspace_id' | 'status' | 'run' | 'updated_at'>;

/**
 * Port: the jobs of one job-loop workflow (mosaic harvests, tile cache jobs) in the store — the
 * job store's own `working` and `finish`, and the sweep's restart.
 */
export interface StuckJobStore<J extends LoopJob>
  extends Pick<JobTransitions<Swept<J>>, 'working' | 'finish'> {
  /**
   * The job in the same status with run + 1 and `mark`, only while it is as read (unfinished, same
   * run, same `updated_at`); undefined when it changed meanwhile.
   */
  restart(job: J, mark: SweepMark, now: string): Promise<J | undefined>;
}

/** Port: the deletions side of the sweep (the store). */
export interface StuckDeletionStore {
  /** Visits every pending or running deletion. */
  unfinished(visit: (op: Swept<DeletionOperation>) => Promise<void>): Promise<void>;
  /**
   * pending|running → pending with attempt_count + 1 and `mark`, only while the operation is as
   * read (same attempt, same `updated_at`); undefined when it changed meanwhile.
   */
  restart(op: DeletionOperation, mark: SweepMark, now: string): Promise<DeletionOperation | undefined>;
}

/** Everything the sweep of stuck work uses. */
export interface SweepPorts {
  settings: SweepSettings;
  executions: WorkflowExecutions;
  deletions: StuckDeletionStore;
  /** Fails a deletion as its workflow's failure task does (fenced by the attempt; releases its workspace counter). */
  deletionSteps: Pick<DeletionWorkflowSteps, 'recordFailure'>;
  deletionStarter: WorkflowStarter;
  imports: Pick<ImportRepository, 'working' | 'save'>;
  importStarter: ImportStarter;
  harvests: StuckJobStore<HarvestJob>;
  harvestStarter: HarvestStarter;
  tileCacheJobs: StuckJobStore<TileCacheJob>;
  tileCacheStarter: TileCacheStarter;
}

/** What the sweep did with one item. */
export type SweepOutcome = 'progressing' | 'running' | 'restarted' | 'failed' | 'changed' | 'error';

/** One swept item and what became of it. */
export interface SweptItem {
  kind: 'deletion' | 'import' | 'harvest' | 'tile_cache_job';
  id: string;
  outcome: SweepOutcome;
  /** `restarted`: the attempt or run started; `error`: why the item was skipped. */
  detail?: string;
}

/** The sweep's report (logged by the entry point). */
export interface SweepReport {
  examined: number;
  counts: Record<SweepOutcome, number>;
  /** Items restarted, failed or skipped on an error (progressing and running ones are only counted). */
  items: SweptItem[];
}

/** One view of both kinds of work: what the rule needs to decide. */
interface Work {
  updatedAt: string;
  attempt: number;
  progress: string;
  sweep?: SweepMark;
}

/**
 * The deletion's progress signature: any change of phase or count is progress (pending → running
 * is not: a restart sets pending and the new execution's first step running again).
 */
export function deletionProgress(op: DeletionOperation): string {
  return `${op.phase}:${op.progress.deleted}`;
}

/** The import's progress signature: any change of status, phase or processed figures is progress. */
export function importProgress(job: ImportJob): string {
  return `${job.status}:${job.phase}:${job.processed_bytes}:${job.processed_features}:${job.processed_layers}`;
}

/** A harvest job's progress signature: its status, phase, cursor and counters. */
export function harvestProgress(job: HarvestJob): string {
  return `${job.status}:${job.phase}:${job.cursor ?? ''}:${job.files_scanned}:${job.granules_removed}`;
}

/** A tile cache job's progress signature: its status, cursor and counters. */
export function tileCacheJobProgress(job: TileCacheJob): string {
  return `${job.status}:${job.cursor ?? ''}:${job.tiles_done}:${job.tiles_removed}`;
}

/** True when the work made no progress for `stuckAfterMs`. */
export function isStuck(work: Pick<Work, 'updatedAt'>, now: Date, settings: SweepSettings): boolean {
  return now.getTime() - Date.parse(work.updatedAt) > settings.stuckAfterMs;
}

/**
 * Restarts in a row without progress: the mark counts only while the item is still in the attempt
 * the sweep started and at the progress it had then; a user's retry or any progress starts afresh.
 */
export function restartsWithoutProgress(work: Work): number {
  const mark = work.sweep;
  return mark && mark.attempt === work.attempt && mark.progress === work.progress ? mark.restarts : 0;
}

/** The decision for stuck work whose execution no longer runs: restart, or fail once the budget is spent. */
export function decide(work: Work, settings: SweepSettings): 'restart' | 'fail' {
  return restartsWithoutProgress(work) >= settings.maxRestarts ? 'fail' : 'restart';
}

/** The `last_error` of work the sweep gives up on. */
export function stuckMessage(
  what: SweptItem['kind'],
  work: Work,
  settings: SweepSettings,
  now: Date,
): string {
  const minutes = Math.round((now.getTime() - Date.parse(work.updatedAt)) / 60_000);
  const restarts = restartsWithoutProgress(work);
  const again = {
    deletion: 'retry the deletion',
    import: 'retry the import (or cancel it to drop what it staged)',
    // A job has no retry: what it committed stays, and a new job goes on from there.
    harvest: 'create a new harvest job (files already harvested are skipped)',
    tile_cache_job: 'create a new tile cache job',
  }[what];
  return (
    `Stopped by the scheduled sweep: no progress for ${minutes} minute(s) (since ${work.updatedAt}) ` +
    `and its workflow is no longer running, after ${restarts} automatic restart(s) without progress ` +
    `(limit ${settings.maxRestarts}); ${again} to try again.`
  );
}

/** The rule's view of a stored item in its `attempt` (a deletion's attempt, a job's run) at `progress`. */
function workOf(item: Swept<{ updated_at: string }>, attempt: number, progress: string): Work {
  return { updatedAt: item.updated_at, attempt, progress, ...(item.sweep ? { sweep: item.sweep } : {}) };
}

function markOf(work: Work, nextAttempt: number, now: Date): SweepMark {
  return {
    restarts: restartsWithoutProgress(work) + 1,
    attempt: nextAttempt,
    progress: work.progress,
    at: now.toISOString(),
  };
}

async function sweepDeletion(ports: SweepPorts, op: Swept<DeletionOperation>, now: Date): Promise<SweptItem> {
  const item = { kind: 'deletion' as const, id: op.id };
  const work = workOf(op, op.attempt_count, deletionProgress(op));
  if (!isActive(op) || !isStuck(work, now, ports.settings)) return { ...item, outcome: 'progressing' };
  if (await ports.executions.deletionRunning(executionName(op), deletionInput(op)))
    return { ...item, outcome: 'running' };
  if (decide(work, ports.settings) === 'fail') {
    await ports.deletionSteps.recordFailure(
      op.id,
      op.attempt_count,
      stuckMessage('deletion', work, ports.settings, now),
    );
    return { ...item, outcome: 'failed' };
  }
  // A new attempt, as retryDeletionOperation gives a stalled operation (ADR 0070): an older execution stops at its next step.
  const next = await ports.deletions.restart(op, markOf(work, op.attempt_count + 1, now), now.toISOString());
  if (!next) return { ...item, outcome: 'changed' };
  await ports.deletionStarter.startDeletion(executionName(next), deletionInput(next));
  return { ...item, outcome: 'restarted', detail: `attempt ${next.attempt_count}` };
}

async function sweepImport(ports: SweepPorts, job: Swept<ImportJob>, now: Date): Promise<SweptItem> {
  const item = { kind: 'import' as const, id: job.id };
  const work = workOf(job, job.run, importProgress(job));
  if (!WORKING_STATUSES.includes(job.status) || !isStuck(work, now, ports.settings))
    return { ...item, outcome: 'progressing' };
  const input = { import_id: job.id, workspace_id: job.workspace_id, run: job.run };
  if (await ports.executions.importRunning(importExecutionName(job), input))
    return { ...item, outcome: 'running' };
  try {
    if (decide(work, ports.settings) === 'fail') {
      const message = stuckMessage('import', work, ports.settings, now);
      await ports.imports.save(job, advance(job, { status: 'failed', error_message: message }, now));
      return { ...item, outcome: 'failed' };
    }
    // A new run in the same status: its step resumes where the job stands (ADR 0083), older runs stop.
    const next: Swept<ImportJob> = {
      ...advance(job, { status: job.status, run: job.run + 1 }, now),
      sweep: markOf(work, job.run + 1, now),
    };
    await ports.imports.save(job, next);
    await startRun(ports.importStarter, next);
    return { ...item, outcome: 'restarted', detail: `run ${next.run}` };
  } catch (error) {
    // Someone (a request, the workflow) changed the job meanwhile: it is not stuck after all.
    if (isConcurrentModification(error)) return { ...item, outcome: 'changed' };
    throw error;
  }
}

/** How the sweep handles the jobs of one job-loop workflow. */
interface JobKind<J extends LoopJob> {
  kind: 'harvest' | 'tile_cache_job';
  store: StuckJobStore<J>;
  progress(job: J): string;
  running(name: string, job: J): Promise<boolean>;
  start(name: string, job: J): Promise<void>;
  /** The `error.reason` of a job the sweep gives up on (the one its workflow's failure records). */
  failureReason: string;
}

/**
 * A stuck harvest or tile cache job, by the imports' rule: a new run (execution `<id>-run-<n>`)
 * whose step goes on after the job's committed cursor — the cursor conditions keep a chunk from
 * committing twice —, or `failed` with its marker released once the budget is spent.
 */
async function sweepJob<J extends LoopJob>(
  k: JobKind<J>,
  ports: SweepPorts,
  job: Swept<J>,
  now: Date,
): Promise<SweptItem> {
  const item = { kind: k.kind, id: job.id };
  const work = workOf(job, jobRun(job), k.progress(job));
  if (isFinished(job.status) || !isStuck(work, now, ports.settings))
    return { ...item, outcome: 'progressing' };
  if (await k.running(jobExecutionName(job), job)) return { ...item, outcome: 'running' };
  if (decide(work, ports.settings) === 'fail') {
    const failed = await k.store.finish(job, 'failed', now.toISOString(), {
      reason: k.failureReason,
      message: stuckMessage(k.kind, work, ports.settings, now),
    });
    return { ...item, outcome: failed ? 'failed' : 'changed' };
  }
  const next = await k.store.restart(job, markOf(work, jobRun(job) + 1, now), now.toISOString());
  if (!next) return { ...item, outcome: 'changed' };
  await k.start(jobExecutionName(next), next);
  return { ...item, outcome: 'restarted', detail: `run ${jobRun(next)}` };
}

function harvestKind(ports: SweepPorts): JobKind<HarvestJob> {
  const input = (job: HarvestJob) => ({
    job_id: job.id,
    workspace_id: job.workspace_id,
    service_id: job.service_id,
  });
  return {
    kind: 'harvest',
    store: ports.harvests,
    progress: harvestProgress,
    running: (name, job) => ports.executions.harvestRunning(name, input(job)),
    start: (name, job) => ports.harvestStarter.startHarvest(name, input(job)),
    failureReason: HARVEST_JOB.failed,
  };
}

function tileCacheKind(ports: SweepPorts): JobKind<TileCacheJob> {
  const input = (job: TileCacheJob) => ({ job_id: job.id, workspace_id: job.workspace_id });
  return {
    kind: 'tile_cache_job',
    store: ports.tileCacheJobs,
    progress: tileCacheJobProgress,
    running: (name, job) => ports.executions.tileCacheJobRunning(name, input(job)),
    start: (name, job) => ports.tileCacheStarter.startTileCacheJob(name, input(job)),
    failureReason: TILE_CACHE_JOB.failed,
  };
}

/**
 * sweepStuckWork: every deletion, import, harvest job and tile cache job a workflow owns whose `updated_at` is older than
 * `stuckAfterMs` and whose execution no longer runs is restarted (a new attempt or run, a new
 * execution); after `maxRestarts` restarts in a row without progress it is failed with a
 * `last_error` that says why (a user's retry starts afresh). Work whose execution still runs is left
 * to the workflow's own retries and timeouts. One item's error doesn't stop the others.
 */
export async function sweepStuckWork(ports: SweepPorts, now = new Date()): Promise<SweepReport> {
  const report: SweepReport = {
    examined: 0,
    counts: { progressing: 0, running: 0, restarted: 0, failed: 0, changed: 0, error: 0 },
    items: [],
  };
  const record = async (kind: SweptItem['kind'], id: string, run: () => Promise<SweptItem>) => {
    report.examined++;
    let swept: SweptItem;
    try {
      swept = await run();
    } catch (error) {
      swept = { kind, id, outcome: 'error', detail: error instanceof Error ? error.message : String(error) };
    }
    report.counts[swept.outcome]++;
    if (swept.outcome !== 'progressing' && swept.outcome !== 'running') report.items.push(swept);
  };
  await ports.deletions.unfinished((op) => record('deletion', op.id, () => sweepDeletion(ports, op, now)));
  await ports.imports.working((job) =>
    record('import', job.id, () => sweepImport(ports, job as Swept<ImportJob>, now)),
  );
  const harvests = harvestKind(ports);
  await ports.harvests.working((job) => record('harvest', job.id, () => sweepJob(harvests, ports, job, now)));
  const tileJobs = tileCacheKind(ports);
  await ports.tileCacheJobs.working((job) =>
    record('tile_cache_job', job.id, () => sweepJob(tileJobs, ports, job, now)),
  );
  return report;
}
