import { describe, expect, it } from 'vitest';
import {
  beginAttempt,
  type ChunkCommit,
  type ChunkedWorkflow,
  type ChunkPort,
  chunkedPhase,
  cutChunk,
  finalPhase,
  type OperationLedger,
  type Release,
  recordFailure,
  runBatch,
  StaleExecutionError,
  type WorkflowOperation,
} from '#domain/chunked-workflow.ts';

type Phase = 'items' | 'target' | 'done';
type Op = WorkflowOperation<Phase>;
type R = Release & { name: string };
type Item = { sk: string; refs?: string[] };

/** An in-memory ledger and one collection, with a clock the test moves. */
function fake(items: Item[], op: Partial<Op> = {}) {
  const state = {
    op: { id: 'op', status: 'running', phase: 'items', attempt_count: 1, ...op } as Op,
    items: [...items],
    commits: [] as ChunkCommit<R>[],
    failed: undefined as string | undefined,
    clock: 0,
  };
  const ledger: OperationLedger<Op> = {
    load: async () => ({ ...state.op }),
    markRunning: async (_id, attempt) => {
      if (!['pending', 'running'].includes(state.op.status) || state.op.attempt_count !== attempt)
        return false;
      state.op.status = 'running';
      return true;
    },
    advance: async (o, next) => {
      state.op = { ...state.op, phase: next, checkpoint_from: undefined, checkpoint_to: undefined };
      void o;
    },
    settle: async () => {},
    markFailed: async (_o, message) => {
      state.op.status = 'failed';
      state.failed = message;
    },
  };
  const port: ChunkPort<Op, Item, R> = {
    capacity: 3,
    position: (i) => i.sk,
    page: async (after, limit) => state.items.filter((i) => !after || i.sk > after).slice(0, limit),
    between: async (from, to) => state.items.filter((i) => i.sk >= from && i.sk <= to),
    commit: async (_o, chunk) => {
      state.commits.push(chunk);
      state.op.checkpoint_from = chunk.from;
      state.op.checkpoint_to = chunk.to;
      state.clock += 10;
    },
    remove: async (gone) => {
      state.items = state.items.filter((i) => !gone.includes(i));
    },
  };
  const now = () => state.clock;
  const wf: ChunkedWorkflow<Op> = {
    label: 'Test',
    ledger,
    done: 'done',
    now,
    next: (o) => (o.phase === 'items' ? 'target' : 'done'),
    phase: (o) =>
      o.phase === 'items'
        ? chunkedPhase<Op, Item, R>(
            {
              chunk: 2,
              counted: () => true,
              releases: (i) => (i.refs ?? []).map((name) => ({ key: name, size: 1, name })),
            },
            () => port,
            now,
          )
        : finalPhase(async () => {
            state.op = { ...state.op, status: 'completed', phase: 'done' };
          }),
  };
  return { state, wf };
}

const items = (n: number): Item[] => Array.from({ length: n }, (_, i) => ({ sk: `I#${i}` }));

describe('the chunked-workflow engine', () => {
  it('runs chunks, advances and completes within the budget', async () => {
    const { state, wf } = fake(items(5));
    expect(await runBatch(wf, 'op', 1, 1000)).toEqual({ done: true });
    expect(state.items).toEqual([]);
    expect(state.commits.map((c) => [c.previous, c.from, c.to, c.counted])).toEqual([
      [undefined, 'I#0', 'I#1', 2],
      ['I#1', 'I#2', 'I#3', 2],
      ['I#3', 'I#4', 'I#4', 1],
    ]);
    expect(state.op.status).toBe('completed');
  });

  it('stops when the budget is spent and resumes after the checkpoint', async () => {
    const { state, wf } = fake(items(6));
    expect(await runBatch(wf, 'op', 1, 15)).toEqual({ done: false });
    expect(state.commits).toHaveLength(2);
    expect(state.op.checkpoint_to).toBe('I#3');
    expect(await runBatch(wf, 'op', 1, 1000)).toEqual({ done: true });
    expect(state.commits[2]?.previous).toBe('I#3');
  });

  it('finishes a committed chunk whose removal was interrupted before reading on', async () => {
    const { state, wf } = fake(items(3), { checkpoint_from: 'I#0', checkpoint_to: 'I#1' });
    await runBatch(wf, 'op', 1, 1000);
    expect(state.items).toEqual([]);
    expect(state.commits[0]?.previous).toBe('I#1');
  });

  it('cuts a chunk where its releases would overflow one commit and merges equal ones', () => {
    const spec = {
      chunk: 10,
      counted: () => true,
      releases: (i: Item) => (i.refs ?? []).map((name) => ({ key: name, size: 1, name })),
    };
    const page = [
      { sk: 'a', refs: ['x', 'y'] },
      { sk: 'b', refs: ['x', 'z'] },
      { sk: 'c', refs: ['w'] },
    ];
    const { chunk, releases } = cutChunk(page, spec, 3);
    expect(chunk.map((i) => i.sk)).toEqual(['a', 'b']);
    expect(releases.map((r) => [r.release.key, r.count])).toEqual([
      ['x', 2],
      ['y', 1],
      ['z', 1],
    ]);
  });

  it('fences by attempt: an older attempt is stale, a completed operation is left alone', async () => {
    const { wf } = fake(items(1), { attempt_count: 2 });
    await expect(beginAttempt(wf, 'op', 1)).rejects.toBeInstanceOf(StaleExecutionError);
    await expect(runBatch(wf, 'op', 1, 1000)).rejects.toBeInstanceOf(StaleExecutionError);
    const done = fake([], { status: 'completed', phase: 'done' });
    await expect(beginAttempt(done.wf, 'op', 1)).resolves.toBeUndefined();
    expect(await runBatch(done.wf, 'op', 1, 1000)).toEqual({ done: true });
  });

  it('records a failure for the current attempt only, cut to 1,000 characters', async () => {
    const stale = fake([], { attempt_count: 2 });
    await recordFailure(stale.wf, 'op', 1, 'boom');
    expect(stale.state.failed).toBeUndefined();
    const current = fake([]);
    await recordFailure(current.wf, 'op', 1, 'x'.repeat(2000));
    expect(current.state.op.status).toBe('failed');
    expect(current.state.failed).toHaveLength(1000);
  });
});
