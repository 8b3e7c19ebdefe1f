/**
 * statement_timeout for the embedded PostGIS (ADR 0031, 0033, 0108). PGlite runs a statement
 * synchronously on its worker's thread, so the timer PostgreSQL arms for statement_timeout (an
 * Emscripten `setitimer` on top of `setTimeout`) can't fire until the statement has ended.
 *
 * Inside the worker, {@link installStatementDeadlines} notices that timer being armed and
 * cleared, and delivers it the way PostgreSQL's own SIGALRM handler would, at the first of:
 * - a clock read of the running statement past the alarm (every wait and sleep reads the clock);
 * - an interrupt from the parent thread, which sees the alarm pass on the shared
 *   {@link DeadlineBoard} and runs {@link INTERRUPT_HOOK} on the busy thread (ADR 0108): that
 *   reaches CPU-bound statements that never read the clock but do check for interrupts.
 * The alarm is PostgreSQL's for all its timeouts. When the one due is statement_timeout, its
 * handler sets QueryCancelPending (and InterruptPending and the latch), so the statement fails
 * with 57014 at its next interrupt check; only then is the statement told to stop on the board.
 * Other timeouts (the idle statistics flush, up to 10 s) just do their work. A statement still
 * running after it was told to stop — having used {@link HARD_STOP_CPU_MS} of its thread's CPU
 * since, or {@link HARD_STOP_GRACE_MS} of wall time — is native code that checks nothing, and is
 * stopped by restarting the worker (infra/local/postgis-supervisor.ts).
 */
import { currentThreadId, threadCpuMs } from './thread-cpu.ts';

/** How long a statement may go on after its cancel was delivered before the worker is restarted. */
export const HARD_STOP_GRACE_MS = 500;
/**
 * How much CPU its thread may use after its cancel was delivered before the worker is restarted
 * (Linux; ADR 0142): a statement that checks for interrupts stops within a few ms of it, so one
 * that computes this long ignores its cancel. Counted in CPU, not wall time, a thread that a busy
 * machine doesn't schedule is given its {@link HARD_STOP_GRACE_MS} instead.
 */
export const HARD_STOP_CPU_MS = 150;

/** The global the worker installs and the parent's interrupt calls on the worker's thread. */
export const INTERRUPT_HOOK = 'geoplane.postgis.interrupt';

const BUSY_SINCE = 0;
const DUE = 1;
const CANCELLED = 2;
const STOP_ASKED = 3;
const THREAD = 4;
const STOP_CPU = 5;
const SLOTS = 6;

/**
 * Shared between the worker and its parent (a SharedArrayBuffer of float64s): when the backend
 * became busy (epoch ms, 0 when idle), when the armed alarm is due (epoch ms, 0 when none is
 * armed), how many statements were stopped in place at their deadline, when the running
 * statement was told to stop (epoch ms, 0 when it wasn't), the worker thread's id in the kernel
 * (0: unknown) and its CPU ms when the statement was told to stop (-1: unknown).
 */
export class DeadlineBoard {
  readonly #slots: Float64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.#slots = new Float64Array(buffer);
  }

  /** A buffer for a new board, to pass in `workerData`. */
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(SLOTS * Float64Array.BYTES_PER_ELEMENT);
  }

  get busySince(): number {
    return this.#slots[BUSY_SINCE] as number;
  }

  /** Marks the backend busy from `epochMs`. */
  busy(epochMs: number): void {
    this.#slots[STOP_ASKED] = 0;
    this.#slots[BUSY_SINCE] = epochMs;
  }

  /** Marks the backend idle: whatever ran has ended. */
  idle(): void {
    this.#slots[BUSY_SINCE] = 0;
    this.#slots[STOP_ASKED] = 0;
  }

  get due(): number {
    return this.#slots[DUE] as number;
  }

  set due(epochMs: number) {
    this.#slots[DUE] = epochMs;
  }

  get cancelled(): number {
    return this.#slots[CANCELLED] as number;
  }

  /** When the running statement was told to stop (0: it wasn't). */
  get stopAsked(): number {
    return this.#slots[STOP_ASKED] as number;
  }

  /** The worker thread's id in the kernel (0: unknown), for {@link threadCpuMs}. */
  get thread(): number {
    return this.#slots[THREAD] as number;
  }

  set thread(tid: number) {
    this.#slots[THREAD] = tid;
  }

  /**
   * Records a cancel delivered in place to the running statement at `epochMs`, when its thread had
   * used `cpuMs` of CPU.
   */
  countCancel(epochMs: number, cpuMs: number | undefined): void {
    this.#slots[CANCELLED] = (this.#slots[CANCELLED] as number) + 1;
    if (this.busySince > 0 && this.stopAsked === 0) {
      this.#slots[STOP_CPU] = cpuMs ?? -1;
      this.#slots[STOP_ASKED] = epochMs;
    }
  }

  /**
   * The CPU ms the worker's thread used since the running statement was told to stop, given its
   * CPU ms now; undefined when no stop was asked or either reading is unknown.
   */
  cpuSinceStop(cpuNow: number | undefined): number | undefined {
    const atStop = this.#slots[STOP_CPU] as number;
    if (this.busySince === 0 || this.stopAsked === 0 || atStop < 0 || cpuNow === undefined) return undefined;
    return cpuNow - atStop;
  }

  /** True when the alarm is due while a statement runs that hasn't been told to stop yet: interrupt it. */
  pastDue(now: number): boolean {
    return this.busySince > 0 && this.stopAsked === 0 && this.due > 0 && now >= this.due;
  }

  /** True when a statement still runs `graceMs` after it was told to stop: only a restart stops it. */
  overrun(now: number, graceMs: number): boolean {
    return this.busySince > 0 && this.stopAsked > 0 && now > this.stopAsked + graceMs;
  }
}

/** What {@link INTERRUPT_HOOK} did: the parent counts `cancelled` and knows the thread answered. */
export type InterruptOutcome = 'cancelled' | 'delivered' | 'not-due' | 'idle';

/**
 * Makes statement_timeout effective inside the PGlite worker (call once, before the first
 * statement). `cancelPending` reads the backend's QueryCancelPending. Returns the board the parent
 * watches, `settle`, to call after every exchange, and `interrupt`, which the parent's interrupt
 * runs on this thread while a statement runs.
 */
export function installStatementDeadlines(
  buffer: SharedArrayBuffer,
  cancelPending: () => boolean,
): {
  board: DeadlineBoard;
  settle(): void;
  interrupt(): InterruptOutcome;
} {
  const board = new DeadlineBoard(buffer);
  board.thread = currentThreadId();
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  const realNow = performance.now.bind(performance);
  const realDateNow = Date.now;
  let armed: { timer: ReturnType<typeof setTimeout>; dueAt: number; deliver: () => void } | undefined;

  // Emscripten's setitimer is `setTimeout(() => { … __emscripten_timeout(which, now) … }, ms)`.
  const wrappedSetTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (typeof callback !== 'function' || !String(callback).includes('_emscripten_timeout')) {
      return realSetTimeout(callback, ms, ...args);
    }
    const record = {
      timer: undefined as unknown as ReturnType<typeof setTimeout>,
      dueAt: realNow() + (ms ?? 0),
      deliver: () => callback(...args),
    };
    record.timer = realSetTimeout(() => {
      if (armed === record) disarm();
      callback(...args);
    }, ms);
    armed = record;
    board.due = realDateNow() + (ms ?? 0);
    return record.timer;
  }) as typeof setTimeout;
  const disarm = () => {
    armed = undefined;
    board.due = 0;
  };
  globalThis.setTimeout = Object.assign(wrappedSetTimeout, realSetTimeout);
  globalThis.clearTimeout = ((timer?: Parameters<typeof clearTimeout>[0]) => {
    if (armed && timer === armed.timer) disarm();
    realClearTimeout(timer);
  }) as typeof clearTimeout;

  /** PostgreSQL's SIGALRM handler, now: it fires the timeouts that are due and re-arms the rest. */
  const deliverNow = () => {
    const pending = armed;
    if (!pending) return;
    disarm();
    realClearTimeout(pending.timer);
    pending.deliver();
  };

  /** Delivers the alarm if it is due; `cancelled` when that asked the running statement to stop. */
  const deliverIfDue = (): InterruptOutcome => {
    if (!armed || realNow() < armed.dueAt) return 'not-due';
    deliverNow();
    if (!cancelPending()) return 'delivered';
    // statement_timeout: the statement is cancelled at its next interrupt check.
    board.countCancel(realDateNow(), threadCpuMs(board.thread));
    return 'cancelled';
  };
  // Every clock read of the running statement (sleeps, waits, clock_timestamp(), now() at each
  // statement start) checks the deadline: monotonic time is performance.now, wall time Date.now.
  performance.now = () => {
    deliverIfDue();
    return realNow();
  };
  Date.now = () => {
    deliverIfDue();
    return realDateNow();
  };
  return {
    board,
    // PostgreSQL leaves an alarm pending when a statement ends early and doesn't re-arm a later
    // one behind it; delivered while idle it finds nothing due and re-arms exactly what is active,
    // so the next statement's deadline on the board is its own.
    settle: deliverNow,
    // Runs between two instructions of the statement, like a signal: the alarm's handler only sets
    // flags and the latch (async-signal-safe in PostgreSQL), which the statement's next interrupt
    // check acts on.
    interrupt: () => (board.busySince > 0 ? deliverIfDue() : 'idle'),
  };
}
