/**
 * The format readers off the event loop (ADR 0107): every sniff, discovery and read runs in a
 * worker thread (reader-worker.ts) under a heap limit, and this side only takes in bounded batches.
 * A worker stuck in one synchronous step for longer than `maxStepMs` (no heartbeat), a discovery
 * longer than `maxDiscoveryMs` and a heap over `readerHeapMb` end with the thread terminated and
 * ImportInputError('file_too_complex'). The reader's temp files live in a scratch dir this side
 * creates and removes whatever became of the thread. A thread that ended its job cleanly waits,
 * unreferenced, for the next one (its modules and SQLite's WebAssembly stay loaded).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { threadId, Worker } from 'node:worker_threads';
import { ImportInputError } from '#domain/import-sources.ts';
import { type ImportLimits, limitsOf } from './limits.ts';
import { CREDITS, type FromReader, fromWire, type ReaderJob, type ToReader } from './reader-protocol.ts';
import type { ReadLimit } from './types.ts';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

/** The worker's bundle, beside the bundle that starts it (built and staged by infra/bundling.ts). */
export const READER_WORKER_FILE = 'format-reader.worker.mjs';

/** How long a new thread may take to load its modules (tsx compiles them when run from source). */
const STARTUP_MS = 60_000;
/** How often the watchdog looks (ms; at most half of `maxStepMs`). */
const CHECK_MS = 250;
/** How long a stopped job may take to run its cleanup before its thread is terminated. */
const STOP_GRACE_MS = 2_000;
/** How long an idle thread waits for another job. */
const IDLE_MS = 30_000;
/** Idle threads kept at most. */
const MAX_IDLE = 1;
/** Jobs one thread runs at most before it is replaced (bounds whatever a long life accumulates). */
const MAX_JOBS = 100;

/** A new worker thread running reader-worker.ts: the bundle's file, or the source through tsx. */
function spawnWorker(heapMb: number): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: heapMb } };
  if (typeof GEOPLANE_BUNDLE !== 'undefined') {
    return new Worker(new URL(`./${READER_WORKER_FILE}`, import.meta.url), options);
  }
  // From source the worker runs TypeScript: its bootstrap registers tsx's loader first (a Worker's
  // `--import` is not honoured on Node 20, and the parent may be vitest rather than tsx).
  const require = createRequire(import.meta.url);
  const tsxApi = pathToFileURL(
    join(require.resolve('tsx/package.json'), '..', 'dist/esm/api/index.mjs'),
  ).href;
  const entry = new URL('./reader-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

const tooComplex = (message: string) => new ImportInputError('file_too_complex', message);

/** "90 s", "15 minutes". */
const duration = (ms: number) =>
  ms < 120_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 60_000)} minutes`;

/** What happens to the job of a thread. */
interface Listener {
  message(message: FromReader): void;
  fail(error: Error): void;
}

/** One worker thread: runs a job at a time, parked between jobs. */
class ReaderThread {
  private readonly worker: Worker;
  readonly ready: Promise<void>;
  dead = false;
  jobs = 0;
  private listener: Listener | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private ended: Promise<void> | undefined;

  constructor(readonly heapMb: number) {
    this.worker = spawnWorker(heapMb);
    let started: () => void = () => undefined;
    let failed: (error: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    const startup = setTimeout(
      () => failed(new Error(`The format reader's thread did not start within ${STARTUP_MS} ms.`)),
      STARTUP_MS,
    );
    const die = (error: Error) => {
      this.dead = true;
      clearTimeout(startup);
      this.unpark();
      failed(error);
      this.listener?.fail(error);
    };
    let running = false;
    this.worker.on('message', (message: FromReader) => {
      if (message.type === 'ready') {
        running = true;
        clearTimeout(startup);
        started();
      } else this.listener?.message(message);
    });
    // Once started, a thread that fails failed on the file (a library's stray error, an exit): an
    // input error, as anything a reader throws is. Before, it is this machine's fault.
    const failure = (what: string) =>
      running
        ? new ImportInputError('unreadable_file', `The file cannot be read: its reader ${what}.`)
        : new Error(`The format reader's thread ${what}.`);
    this.worker.on('error', (error: Error & { code?: string }) =>
      die(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? tooComplex(
              `Reading the file needs more than ${heapMb} MB of memory (the limit); split or simplify it.`,
            )
          : failure(`failed (${error.message})`),
      ),
    );
    this.worker.on('exit', (code) => die(failure(`ended (exit code ${code})`)));
  }

  attach(listener: Listener | undefined): void {
    this.listener = listener;
  }

  post(message: ToReader): void {
    if (!this.dead) this.worker.postMessage(message);
  }

  /** Ends the thread (at once, also mid-step); resolves once it has exited, or after STOP_GRACE_MS. */
  terminate(): Promise<void> {
    this.dead = true;
    this.unpark();
    if (!this.ended) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_GRACE_MS);
      });
      const exited = this.worker.terminate().then(
        () => undefined,
        () => undefined,
      );
      this.ended = Promise.race([exited, late]).finally(() => clearTimeout(timer));
    }
    return this.ended;
  }

  /** Idle: keeps no process alive, and ends after IDLE_MS without a job. */
  park(onExpiry: () => void): void {
    this.worker.unref();
    this.idleTimer = setTimeout(onExpiry, IDLE_MS);
    this.idleTimer.unref();
  }

  unpark(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (!this.dead) this.worker.ref();
  }
}

const idle: ReaderThread[] = [];

/** A ready thread with this heap limit: an idle one, else a new one. */
async function acquire(heapMb: number): Promise<ReaderThread> {
  const at = idle.findIndex((t) => t.heapMb === heapMb && !t.dead);
  if (at !== -1) {
    const [thread] = idle.splice(at, 1) as [ReaderThread];
    thread.unpark();
    return thread;
  }
  const thread = new ReaderThread(heapMb);
  try {
    await thread.ready;
  } catch (error) {
    await thread.terminate();
    throw error;
  }
  return thread;
}

/** Parks a thread that ended its job cleanly (or ends it when enough are idle). */
function release(thread: ReaderThread): void {
  if (thread.dead || thread.jobs >= MAX_JOBS || idle.length >= MAX_IDLE) {
    void thread.terminate();
    return;
  }
  idle.push(thread);
  thread.park(() => {
    const at = idle.indexOf(thread);
    if (at !== -1) idle.splice(at, 1);
    void thread.terminate();
  });
}

let lastJob = 0;

/**
 * The scratch dirs of this process's running jobs, across module instances (a test runner may load
 * this module more than once in one process).
 */
const LIVE = Symbol.for('geoplane.readerScratch');
const shared = globalThis as { [LIVE]?: Set<string> };
shared[LIVE] ??= new Set<string>();
const live = shared[LIVE];
let swept = false;

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
};

/**
 * Removes, once per process, the scratch dirs of jobs whose process died mid-read (kill -9, a
 * Lambda that ran out of memory): an extracted shapefile can take gigabytes of /tmp, which a warm
 * Lambda keeps. A dir is named after its process and thread: `geoplane-read-<pid>-<thread>-…`; one
 * of this process is stale only when it is this thread's and no job of it runs (a process that
 * died had the same pid).
 */
async function sweepScratch(): Promise<void> {
  if (swept) return;
  swept = true;
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const match = /^geoplane-read-(\d+)-(\d+)-/.exec(name);
    if (!match) continue;
    const [pid, thread] = [Number(match[1]), Number(match[2])];
    const dir = join(tmpdir(), name);
    const stale = pid === process.pid ? thread === threadId && !live.has(dir) : !isAlive(pid);
    if (stale) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** What a job answers: batches of features (read) and its end. */
type Answer = Extract<FromReader, { type: 'features' | 'rows' | 'done' | 'error' }>;

/** How a job runs on this side. */
export interface JobOptions {
  limits?: Partial<ImportLimits> | undefined;
  onBytes?: ((bytes: number) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** A read of staged rows: how far its consumer will read (the worker is told as it moves). */
  limit?: ReadLimit | undefined;
  /**
   * False: the thread ends with the job instead of waiting for the next one (a discovery's tail,
   * ADR 0156: its heap is not held through the load, and the idle place stays the head's).
   */
  park?: boolean | undefined;
}

/**
 * Runs `job` in a reader thread and yields its batches and its end; throws its error, the
 * signal's reason, or 'file_too_complex' when the thread had to be stopped. Leaving early stops
 * the job (its cleanup runs in the thread) and parks the thread again.
 */
export async function* runJob(job: ReaderJob, options: JobOptions = {}): AsyncGenerator<Answer> {
  const limits = limitsOf(options.limits);
  options.signal?.throwIfAborted();
  await sweepScratch();
  const scratch = await mkdtemp(join(tmpdir(), `geoplane-read-${process.pid}-${threadId}-`));
  live.add(scratch);
  let thread: ReaderThread | undefined;
  const id = ++lastJob;
  const queue: Answer[] = [];
  let failure: Error | undefined;
  let finished = false;
  let outstanding = CREDITS;
  let lastHeard = performance.now();
  let wake: (() => void) | undefined;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const fail = (error: Error) => {
    failure ??= error;
    notify();
  };
  const stop = (error: Error) => {
    fail(error);
    void thread?.terminate();
  };
  const onAbort = () => stop(options.signal?.reason ?? new DOMException('aborted', 'AbortError'));
  const timers: NodeJS.Timeout[] = [];
  let posted = false;
  let unwatch: (() => void) | undefined;
  try {
    thread = await acquire(limits.readerHeapMb);
    options.signal?.throwIfAborted();
    thread.jobs++;
    options.signal?.addEventListener('abort', onAbort, { once: true });
    thread.attach({
      message(message) {
        if (message.type === 'ready' || message.id !== id) return;
        lastHeard = performance.now();
        switch (message.type) {
          case 'alive':
            return;
          case 'bytes':
            if (job.op === 'discover') options.onBytes?.(message.bytes);
            return;
          case 'features':
          case 'rows':
            outstanding--;
            break;
          case 'done':
          case 'error':
            finished = true;
            break;
        }
        queue.push(message);
        notify();
      },
      fail,
    });
    // The watchdog: a thread that owes an answer and hasn't been heard of for maxStepMs is stuck in
    // one synchronous step. A late look (this thread was busy itself) skips a round, since the
    // worker's messages may be waiting behind it.
    const every = Math.max(10, Math.min(CHECK_MS, limits.maxStepMs / 2));
    let lastLook = performance.now();
    timers.push(
      setInterval(() => {
        const now = performance.now();
        const late = now - lastLook > 2 * every;
        lastLook = now;
        if (late || finished) return;
        if (job.op === 'read' && outstanding === 0) lastHeard = now;
        else if (now - lastHeard > limits.maxStepMs) {
          stop(
            tooComplex(
              `Reading ${job.filename} was stopped: one step of the reader ran for more than ${duration(limits.maxStepMs)} without a break (a huge feature or a pathological structure). Simplify or split the file.`,
            ),
          );
        }
      }, every),
    );
    if (job.op !== 'read') {
      timers.push(
        setTimeout(
          () =>
            stop(
              tooComplex(
                `Discovering ${job.filename} took longer than ${duration(limits.maxDiscoveryMs)} (the limit); split the file.`,
              ),
            ),
          limits.maxDiscoveryMs,
        ),
      );
    }
    lastHeard = performance.now();
    const limit = job.op === 'read' && job.shape ? options.limit : undefined;
    const posting = job.op === 'read' && limit ? { ...job, until: limit.until } : job;
    thread.post({ type: 'job', id, job: posting, scratch });
    posted = true;
    unwatch = limit?.watch((until) => thread?.post({ type: 'until', id, until }));
    for (;;) {
      if (failure) throw failure;
      const answer = queue.shift();
      if (!answer) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      if (answer.type === 'error') throw fromWire(answer.error);
      // Back to the event loop before each batch: the consumer's work on one batch is the longest
      // this thread goes without serving anything else.
      if (answer.type === 'features' || answer.type === 'rows') await turn();
      if (failure) throw failure;
      yield answer;
      if (answer.type === 'done') return;
      outstanding++;
      thread.post({ type: 'more', id });
    }
  } finally {
    unwatch?.();
    for (const timer of timers) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (thread) {
      if (posted && !finished && !thread.dead) {
        // Left early: the job ends in the thread (the reader's own cleanup runs), or the thread goes.
        thread.post({ type: 'stop', id });
        let late = false;
        const grace = setTimeout(() => {
          late = true;
          notify();
        }, STOP_GRACE_MS);
        while (!finished && !thread.dead && !late) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        clearTimeout(grace);
        if (!finished) await thread.terminate();
      }
      thread.attach(undefined);
      if (thread.dead || options.park === false) await thread.terminate();
      else release(thread);
    }
    await rm(scratch, { recursive: true, force: true });
    live.delete(scratch);
  }
}

/** The value a sniff or discovery job answers. */
export async function jobValue(job: ReaderJob, options: JobOptions = {}): Promise<unknown> {
  for await (const answer of runJob(job, options)) if (answer.type === 'done') return answer.value;
  throw new Error('The format reader ended without an answer.');
}
