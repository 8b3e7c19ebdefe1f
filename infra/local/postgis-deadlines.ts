/**
 * statement_timeout for the embedded PostGIS (ADR 0031, 0033). PGlite runs a statement
 * synchronously on its worker's thread, so the timer PostgreSQL arms for statement_timeout (an
 * Emscripten `setitimer` on top of `setTimeout`) can't fire until the statement has ended.
 *
 * Inside the worker, {@link installStatementDeadlines} notices that timer being armed and
 * cleared, and the running statement reads the clock often enough (every wait and sleep does) to
 * be stopped at its deadline the way PostgreSQL's own SIGALRM handler would: InterruptPending,
 * QueryCancelPending and the process latch set, so the statement fails with 57014 at its next
 * interrupt check. A CPU-bound statement that never reads the clock can't see that; the parent
 * thread watches the shared {@link DeadlineBoard} and restarts the worker when a statement is
 * still running {@link HARD_STOP_GRACE_MS} after its deadline (infra/local/postgis.ts).
 */

/** How long past its deadline a statement may go on before the worker is terminated. */
export const HARD_STOP_GRACE_MS = 300;

/**
 * Shared between the worker and its parent (a SharedArrayBuffer of 3 float64s): when the backend
 * became busy (epoch ms, 0 when idle), when the running statement's timeout is due (epoch ms, 0
 * when none is armed), and how many statements were stopped at their deadline.
 */
export class DeadlineBoard {
  readonly #slots: Float64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.#slots = new Float64Array(buffer);
  }

  /** A buffer for a new board, to pass in `workerData`. */
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT);
  }

  get busySince(): number {
    return this.#slots[0] as number;
  }

  set busySince(epochMs: number) {
    this.#slots[0] = epochMs;
  }

  get due(): number {
    return this.#slots[1] as number;
  }

  set due(epochMs: number) {
    this.#slots[1] = epochMs;
  }

  get cancelled(): number {
    return this.#slots[2] as number;
  }

  countCancel(): void {
    this.#slots[2] = (this.#slots[2] as number) + 1;
  }

  /** True when a statement has run past its deadline by more than `graceMs`. */
  overrun(now: number, graceMs: number): boolean {
    return this.busySince > 0 && this.due > 0 && now > this.due + graceMs;
  }
}

/**
 * Makes statement_timeout effective inside the PGlite worker (call once, before the first
 * statement). Returns the board the parent watches and `settle`, to call after every exchange.
 */
export function installStatementDeadlines(buffer: SharedArrayBuffer): {
  board: DeadlineBoard;
  settle(): void;
} {
  const board = new DeadlineBoard(buffer);
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

  // Every clock read of the running statement (sleeps, waits, clock_timestamp(), now() at each
  // statement start) checks the deadline: monotonic time is performance.now, wall time Date.now.
  const check = () => {
    if (!armed || realNow() < armed.dueAt) return;
    // Due while a statement runs: the statement is cancelled at its next interrupt check.
    deliverNow();
    board.countCancel();
  };
  performance.now = () => {
    check();
    return realNow();
  };
  Date.now = () => {
    check();
    return realDateNow();
  };
  return {
    board,
    // PostgreSQL leaves an alarm pending when a statement ends early and doesn't re-arm a later
    // one behind it; delivered while idle it finds nothing due and re-arms exactly what is active,
    // so the next statement's deadline on the board is its own.
    settle: deliverNow,
  };
}
