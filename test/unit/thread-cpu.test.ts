import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadlineBoard } from '#infra/local/postgis-deadlines.ts';
import { currentThreadId, threadCpuMs } from '#infra/local/thread-cpu.ts';

// How the supervisor tells a statement that ignores its cancel from a thread a busy machine
// doesn't schedule (ADR 0142): the worker thread's own CPU time, read from Linux's /proc.
const linux = existsSync('/proc/thread-self');

/** A worker thread that posts its kernel thread id, then spins or sleeps for `ms` and posts 'done'. */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
parentPort.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop()));
parentPort.once('message', () => {
  const end = Date.now() + workerData.ms;
  if (workerData.spin) { while (Date.now() < end) {} }
  else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
  parentPort.postMessage('done');
  parentPort.once('message', () => process.exit(0));
});
`;

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.terminate()));
});

/** The CPU ms a worker's thread used over `ms` of spinning or sleeping, read from outside it. */
async function cpuOver(spin: boolean, ms: number): Promise<number> {
  const worker = new Worker(THREAD, { eval: true, workerData: { spin, ms } });
  workers.push(worker);
  const next = () => new Promise<unknown>((resolve) => worker.once('message', resolve));
  const tid = (await next()) as number;
  const before = threadCpuMs(tid);
  const done = next();
  worker.postMessage('go');
  await done;
  const after = threadCpuMs(tid);
  expect(before).toBeTypeOf('number');
  expect(after).toBeTypeOf('number');
  return (after as number) - (before as number);
}

describe.skipIf(!linux)('a thread’s CPU time (Linux /proc)', () => {
  it('knows the calling thread: the main thread’s id is the process id', () => {
    expect(currentThreadId()).toBe(process.pid);
  });

  it('counts the CPU a spinning thread uses, and not the time a sleeping one waits', async () => {
    const spinning = await cpuOver(true, 600);
    const sleeping = await cpuOver(false, 600);
    // Even on a busy machine a spinning thread gets a good share of 600 ms.
    expect(spinning).toBeGreaterThanOrEqual(150);
    expect(sleeping).toBeLessThan(50);
  }, 20_000);

  it('knows nothing of a thread that is not one of this process', () => {
    expect(threadCpuMs(0)).toBeUndefined();
    expect(threadCpuMs(2 ** 31 - 1)).toBeUndefined();
  });
});

describe('the deadline board: CPU since a statement was told to stop', () => {
  it('counts from the cancel while the statement runs, and forgets it once the backend is idle', () => {
    const board = new DeadlineBoard(DeadlineBoard.allocate());
    board.busy(1_000);
    expect(board.cpuSinceStop(500)).toBeUndefined();
    board.countCancel(2_000, 300);
    expect(board.stopAsked).toBe(2_000);
    expect(board.cpuSinceStop(460)).toBe(160);
    // A second cancel of the same statement keeps the first's readings.
    board.countCancel(2_100, 400);
    expect(board.cpuSinceStop(460)).toBe(160);
    board.idle();
    expect(board.cpuSinceStop(900)).toBeUndefined();
  });

  it('knows nothing when the CPU could not be read at the cancel or now', () => {
    const board = new DeadlineBoard(DeadlineBoard.allocate());
    board.busy(1_000);
    board.countCancel(2_000, undefined);
    expect(board.cpuSinceStop(460)).toBeUndefined();
    board.idle();
    board.busy(3_000);
    board.countCancel(3_500, 100);
    expect(board.cpuSinceStop(undefined)).toBeUndefined();
  });
});
