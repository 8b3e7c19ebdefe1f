/**
 * The chunked-workflow engine (ADR 0080): the generic part of a long-running task, written once.
 * A workflow is an operation item with a `phase` and a checkpoint; each task invocation runs
 * phases until its time budget is spent. A chunked phase reads the next chunk after the
 * checkpoint, commits the checkpoint together with the chunk's reference releases (one write),
 * then removes the chunk's items; a re-run first finishes the committed chunk. Every transition
 * is fenced by the operation's attempt. The store implements the ports; a workflow (the deletion,
 * the coming import) contributes phase specs that say what one chunk does.
 */

import { silentLog, throttledProgress, type WorkflowKind, type WorkflowLog } from './workflow-log.ts';

/** The operation is not running under this execution any more (failed, retried or completed elsewhere). */
export class StaleExecutionError extends Error {
  override name = 'StaleExecutionError';
}

/** An item the workflow can't interpret; the operation fails with this message until it is repaired. */
export class CorruptItemError extends Error {
  override name = 'CorruptItemError';
}

export type OperationStatus = 'pending' | 'running' | 'failed' | 'completed';

/** What the engine reads of an operation item. */
export interface WorkflowOperation<Phase extends string = string> {
  id: string;
  status: OperationStatus;
  phase: Phase;
  attempt_count: number;
  /** The key range of the last committed chunk of the current phase. */
  checkpoint_from?: string;
  checkpoint_to?: string;
}

/** Port: the operation item, its fenced transitions and its progress figures. */
export interface OperationLedger<Op extends WorkflowOperation> {
  /** Consistent read; undefined when the item is gone. */
  load(id: string): Promise<Op | undefined>;
  /** pending|running → running IF attempt_count = attempt; false when that condition failed. */
  markRunning(id: string, attempt: number): Promise<boolean>;
  /** phase → next, checkpoint cleared, IF still in that phase and running (else a TransientError). */
  advance(op: Op, next: Op['phase']): Promise<void>;
  /** Writes the progress figures not yet recorded (before a batch hands back). */
  settle(id: string): Promise<void>;
  /** pending|running → failed with `message` IF attempt_count is unchanged; a lost race is no error. */
  markFailed(op: Op, message: string): Promise<void>;
}

/** A change committed with the chunk whose item held it: equal `key`s merge (counted); `size` write items. */
export interface Release {
  key: string;
  size: number;
}

/** What one chunk commits: its key range (after `previous`), how many items it counts, its releases. */
export interface ChunkCommit<R extends Release> {
  previous: string | undefined;
  from: string;
  to: string;
  counted: number;
  releases: { release: R; count: number }[];
}

/** Port: where one chunked phase reads, commits and removes its items (in key order). */
export interface ChunkPort<Op, Item, R extends Release> {
  /** Write items one commit may carry besides the checkpoint. */
  readonly capacity: number;
  /** At most `limit` of the phase's items after `after` (from the start when undefined). */
  page(after: string | undefined, limit: number): Promise<Item[]>;
  /** The phase's items of a committed range still present (its removal may have been interrupted). */
  between(from: string, to: string): Promise<Item[]>;
  /** An item's position in the key order (what the checkpoint records). */
  position(item: Item): string;
  /** Checkpoint + releases in one write, IF the checkpoint is still `previous` (else a TransientError). */
  commit(op: Op, chunk: ChunkCommit<R>): Promise<void>;
  /** Deletes the items; idempotent. */
  remove(items: Item[]): Promise<void>;
}

/** What one chunk of a phase does, in the workflow's terms. */
export interface ChunkSpec<Item, R extends Release> {
  /** Items per checkpoint (fewer when their releases would overflow one commit). */
  chunk: number;
  /** Items the phase passes over (they stay; the checkpoint moves past them). */
  skip?: (item: Item) => boolean;
  /** Items that count as progress. */
  counted: (item: Item) => boolean;
  /** Releases committed with the checkpoint of the chunk that removes the item. */
  releases?: (item: Item) => R[];
}

/** One phase: runs until it is finished (true) or the deadline passed (false). */
export interface PhaseSpec<Op> {
  /** `progress(counted)` after each committed chunk or round (the engine logs it, throttled). */
  run(op: Op, deadline: number, progress?: (counted: number) => void): Promise<boolean>;
  /** Its own last write completes the operation (the engine doesn't advance after it). */
  completes?: boolean;
}

/** A workflow on the engine: its ledger, its phase order and the spec of each phase. */
export interface ChunkedWorkflow<Op extends WorkflowOperation> {
  /** Names the operation in messages ("Deletion"). */
  label: string;
  ledger: OperationLedger<Op>;
  /** The final phase: nothing is left to do. */
  done: Op['phase'];
  next(op: Op): Op['phase'];
  phase(op: Op): PhaseSpec<Op>;
  now?: () => number;
  /** Where the engine logs the start, progress (at most every 5 s) and the end (ADR 0090). */
  log?: WorkflowLog;
  /** Names the workflow in its outcome metrics (ADR 0092); without it no outcome is reported. */
  kind?: WorkflowKind;
}

async function load<Op extends WorkflowOperation>(wf: ChunkedWorkflow<Op>, id: string): Promise<Op> {
  const op = await wf.ledger.load(id);
  if (!op) throw new StaleExecutionError(`${wf.label} operation ${id} does not exist.`);
  return op;
}

function stale(wf: ChunkedWorkflow<WorkflowOperation>, op: WorkflowOperation, attempt: number) {
  return new StaleExecutionError(
    `${wf.label} ${op.id} is ${op.status} (attempt ${op.attempt_count}, not ${attempt}).`,
  );
}

/**
 * pending|running → running for this attempt. A completed operation is left alone; a failed one,
 * or one retried since (a newer attempt), makes this execution stale.
 */
export async function beginAttempt<Op extends WorkflowOperation>(
  wf: ChunkedWorkflow<Op>,
  id: string,
  attempt: number,
): Promise<void> {
  if (await wf.ledger.markRunning(id, attempt)) {
    (wf.log ?? silentLog).info(`${wf.label} started`, { operation_id: id, attempt });
    return;
  }
  const op = await load(wf, id);
  if (op.status !== 'completed') throw stale(wf, op, attempt);
}

/** Runs phases until the operation is done or `budgetMs` is spent. */
export async function runBatch<Op extends WorkflowOperation>(
  wf: ChunkedWorkflow<Op>,
  id: string,
  attempt: number,
  budgetMs: number,
): Promise<{ done: boolean }> {
  const now = wf.now ?? Date.now;
  const deadline = now() + budgetMs;
  let op = await load(wf, id);
  if (op.status === 'completed') return { done: true };
  if (op.status !== 'running' || op.attempt_count !== attempt) throw stale(wf, op, attempt);
  const log = wf.log ?? silentLog;
  let counted = 0;
  const report = throttledProgress(log, `${wf.label} progress`, now);
  const progress = (n: number) => {
    counted += n;
    report(() => ({ operation_id: id, attempt, phase: op.phase, removed_in_batch: counted }));
  };
  const completed = () => {
    log.info(`${wf.label} completed`, { operation_id: id, attempt, removed_in_batch: counted });
    if (wf.kind) log.outcome?.(wf.kind, 'succeeded');
    return { done: true };
  };
  while (now() < deadline) {
    if (op.phase === wf.done) return completed();
    const spec = wf.phase(op);
    if (!(await spec.run(op, deadline, progress))) break;
    if (!spec.completes) await wf.ledger.advance(op, wf.next(op));
    op = await load(wf, id);
  }
  await wf.ledger.settle(id);
  if (op.phase === wf.done) return completed();
  log.info(`${wf.label} batch handed back`, {
    operation_id: id,
    attempt,
    phase: op.phase,
    removed_in_batch: counted,
  });
  return { done: false };
}

/** Records the failure of the current attempt (a stale execution just ends). */
export async function recordFailure<Op extends WorkflowOperation>(
  wf: ChunkedWorkflow<Op>,
  id: string,
  attempt: number,
  message: string,
): Promise<void> {
  const op = await load(wf, id);
  if ((op.status !== 'pending' && op.status !== 'running') || op.attempt_count !== attempt) return;
  await wf.ledger.markFailed(op, message.slice(0, 1000));
  const log = wf.log ?? silentLog;
  log.warn(`${wf.label} failed`, {
    operation_id: id,
    attempt,
    phase: op.phase,
    reason: message,
  });
  if (wf.kind) log.outcome?.(wf.kind, 'failed');
}

/**
 * The first items of `page` whose releases fit one commit (at least one item), and those
 * releases merged by key.
 */
export function cutChunk<Item, R extends Release>(
  page: Item[],
  spec: ChunkSpec<Item, R>,
  capacity: number,
): { chunk: Item[]; releases: { release: R; count: number }[] } {
  const releases = new Map<string, { release: R; count: number }>();
  let used = 0;
  const chunk: Item[] = [];
  for (const item of page) {
    const changes = spec.skip?.(item) ? [] : (spec.releases?.(item) ?? []);
    const fresh = changes.filter((c) => !releases.has(c.key)).reduce((n, c) => n + c.size, 0);
    if (chunk.length > 0 && used + fresh > capacity) break;
    for (const c of changes) {
      const known = releases.get(c.key);
      if (known) known.count++;
      else {
        releases.set(c.key, { release: c, count: 1 });
        used += c.size;
      }
    }
    chunk.push(item);
  }
  return { chunk, releases: [...releases.values()] };
}

/** A phase of chunks: finish the committed chunk, then chunk → commit → remove until none is left. */
export function chunkedPhase<Op extends WorkflowOperation, Item, R extends Release>(
  spec: ChunkSpec<Item, R>,
  port: (op: Op) => ChunkPort<Op, Item, R>,
  now: () => number = Date.now,
): PhaseSpec<Op> {
  return {
    async run(op, deadline, progress) {
      const items = port(op);
      let previous = op.checkpoint_to;
      if (op.checkpoint_from && op.checkpoint_to) {
        const leftover = (await items.between(op.checkpoint_from, op.checkpoint_to)).filter(
          (i) => !spec.skip?.(i),
        );
        if (leftover.length > 0) await items.remove(leftover);
      }
      while (now() < deadline) {
        const page = await items.page(previous, spec.chunk);
        if (page.length === 0) return true;
        const { chunk, releases } = cutChunk(page, spec, items.capacity);
        const targets = chunk.filter((i) => !spec.skip?.(i));
        const from = items.position(chunk[0] as Item);
        const to = items.position(chunk[chunk.length - 1] as Item);
        await items.commit(op, {
          previous,
          from,
          to,
          counted: targets.filter(spec.counted).length,
          releases,
        });
        if (targets.length > 0) await items.remove(targets);
        progress?.(targets.filter(spec.counted).length);
        previous = to;
        op.checkpoint_from = from;
        op.checkpoint_to = to;
      }
      return false;
    },
  };
}

/** A phase of rounds: each round does some work and says whether anything is left. */
export function roundsPhase<Op>(
  round: (op: Op) => Promise<'finished' | 'more'>,
  now: () => number = Date.now,
): PhaseSpec<Op> {
  return {
    async run(op, deadline, progress) {
      while (now() < deadline) {
        if ((await round(op)) === 'finished') return true;
        progress?.(0);
      }
      return false;
    },
  };
}

/** The last phase: one step whose write completes the operation. */
export function finalPhase<Op>(finish: (op: Op) => Promise<void>): PhaseSpec<Op> {
  return {
    completes: true,
    async run(op) {
      await finish(op);
      return true;
    },
  };
}
