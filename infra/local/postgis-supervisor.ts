/**
 * Keeps the embedded PostGIS answering (ADR 0108): a statement past its statement_timeout is
 * stopped in place when it can be and by a verified restart of the worker when it can't, and
 * clients that arrive while the worker restarts wait for it instead of being refused.
 *
 * - **The door.** The public port belongs to this thread, not to the worker: every connection is
 *   relayed to the current worker's own port. While a worker restarts, a new connection is held
 *   (its SSLRequest answered 'N', its startup buffered) and relayed to the new worker once it is
 *   verified; one that can't be within {@link HOLD_MS} is told `57P03 the database system is
 *   starting up`, as PostgreSQL says while it starts, which a client retries. A connection whose
 *   worker went away before it answered anything is replayed to the next one; one that had an
 *   answer gets what that worker sent it last (the FATAL that tells a client its statement wedged
 *   the backend) and is closed, never left half-open.
 * - **Interrupt.** When PostgreSQL's alarm is due while a statement runs, it is delivered on the
 *   worker's busy thread through the inspector protocol (the one Node API that runs code on a
 *   thread that is executing WebAssembly); at statement_timeout the statement fails with 57014 at
 *   its next interrupt check.
 * - **Restart.** A statement still running after its cancel (its thread has used
 *   {@link HARD_STOP_CPU_MS} of CPU since, read from /proc, or {@link HARD_STOP_GRACE_MS} passed),
 *   a thread that doesn't take the interrupt within {@link UNRESPONSIVE_MS} (blocked outside
 *   JavaScript and WebAssembly), a worker that reports its backend wedged or failed, or a worker
 *   that exits: the worker is terminated (bounded: a thread stuck in a system call is abandoned)
 *   and a new one opens the same data dir. It serves only after a probe query over the wire
 *   answered; a restart that fails is tried again.
 */
import { Session } from 'node:inspector';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Worker } from 'node:worker_threads';
import pg from 'pg';
import {
  type DeadlineBoard,
  HARD_STOP_CPU_MS,
  HARD_STOP_GRACE_MS,
  INTERRUPT_HOOK,
  type InterruptOutcome,
} from './postgis-deadlines.ts';
import type { WorkerMessage } from './postgis-worker.ts';
import { threadCpuMs } from './thread-cpu.ts';

/** How often the watchdog reads the deadline board. */
const WATCH_MS = 50;
/** A connection held during a restart is answered 57P03 this long after it arrived (pg's connect timeout is 2 s). */
export const HOLD_MS = 1_200;
/** A connection must send its startup packet within this (as the worker's front door asks). */
const LOGIN_TIMEOUT_MS = 10_000;
/** A busy thread that doesn't run an interrupt within this is stuck: restart it. */
const UNRESPONSIVE_MS = 1_000;
/**
 * How long a connection the old worker answered still relays, after a cut, what that worker sent
 * it last (the FATAL it told the statement's client before it reported the backend wedged).
 */
const DRAIN_MS = 250;
/** How long a terminated worker may take to exit before it is abandoned. */
const TERMINATE_MS = 3_000;
/** The probe query's connect and read timeout. */
const PROBE_MS = 30_000;
/** Pauses between failed restart attempts. */
const RETRY_PAUSES_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** A worker whose port accepts logins. */
export interface Running {
  worker: Worker;
  board: DeadlineBoard;
  ready: Extract<WorkerMessage, { type: 'ready' }>;
}

/** Options of {@link PostgisSupervisor.start}. */
export interface SupervisorOptions {
  /** The public port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** The worker started already. */
  first: Running;
  /** Starts a new worker on the same data dir. */
  relaunch(): Promise<Running>;
  /** The superuser the probe query logs in as. */
  admin: { user: string; password: string; database: string };
  progress(message: string): void;
}

/** What the supervisor stopped, for logs and tests. */
export interface StoppedStatements {
  /** Statements cancelled in place at their deadline (by a clock read or an interrupt). */
  cancelled: number;
  /** Of those, the ones the parent's interrupt reached. */
  interrupted: number;
  /** Verified restarts of the worker. */
  restarts: number;
}

/** The embedded PostGIS's door, watchdog and restarts; see the module comment. */
export class PostgisSupervisor {
  readonly #options: SupervisorOptions;
  readonly #door: Door;
  readonly #interrupter: Interrupter | undefined;
  readonly #watchdog: NodeJS.Timeout;
  #current: Running;
  #restarting: Promise<void> | undefined;
  #stopping = false;
  /** Cuts the pause between restart attempts short when stopping. */
  readonly #stopped = new AbortController();
  #cancelledBefore = 0;
  #interrupted = 0;
  #restarts = 0;
  /** When the interrupt still unanswered was sent (0: none is). */
  #interruptSent = 0;

  private constructor(options: SupervisorOptions, door: Door) {
    this.#options = options;
    this.#door = door;
    this.#interrupter = Interrupter.acquire();
    this.#current = options.first;
    this.#adopt(options.first);
    door.open(options.first.ready.port);
    this.#watchdog = setInterval(() => this.#tick(), WATCH_MS);
    this.#watchdog.unref();
  }

  /** Opens the door on `options.port` and watches the first worker. */
  static async start(options: SupervisorOptions): Promise<PostgisSupervisor> {
    const door = new Door();
    await door.listen(options.port);
    return new PostgisSupervisor(options, door);
  }

  /** The public port. */
  get port(): number {
    return this.#door.port;
  }

  stoppedStatements(): StoppedStatements {
    return {
      cancelled: this.#cancelledBefore + this.#current.board.cancelled,
      interrupted: this.#interrupted,
      restarts: this.#restarts,
    };
  }

  /** Stops watching, closes the door and stops the worker (waits for a restart in progress first). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopped.abort();
    clearInterval(this.#watchdog);
    await this.#restarting;
    this.#door.close();
    const { worker } = this.#current;
    this.#interrupter?.forget(worker);
    this.#interrupter?.release();
    await stopWorker(worker);
  }

  #tick(): void {
    if (this.#restarting || this.#stopping) return;
    const running = this.#current;
    const { board, worker } = running;
    const now = Date.now();
    const cpu = board.stopAsked > 0 ? board.cpuSinceStop(threadCpuMs(board.thread)) : undefined;
    if (cpu !== undefined && cpu >= HARD_STOP_CPU_MS) {
      this.#restart(
        `a statement used ${cpu} ms of CPU in ${now - board.stopAsked} ms after its statement_timeout cancel`,
      );
      return;
    }
    if (board.overrun(now, HARD_STOP_GRACE_MS)) {
      this.#restart(`a statement went on ${now - board.stopAsked} ms after its statement_timeout cancel`);
      return;
    }
    if (!board.pastDue(now)) return;
    if (!this.#interrupter) {
      // No inspector: the alarm can't be delivered, and it is most likely statement_timeout.
      if (now > board.due + HARD_STOP_GRACE_MS) {
        this.#restart(`a statement ran ${now - board.due} ms past its alarm and could not be interrupted`);
      }
      return;
    }
    if (this.#interruptSent > 0) {
      if (now - this.#interruptSent > UNRESPONSIVE_MS) {
        this.#restart(`the worker's thread took no interrupt for ${now - this.#interruptSent} ms`);
      }
      return;
    }
    this.#interruptSent = now;
    void this.#interrupter.interrupt(worker).then((outcome) => {
      if (this.#current !== running) return;
      if (outcome !== 'no-reply') this.#interruptSent = 0;
      if (outcome === 'cancelled') this.#interrupted += 1;
    });
  }

  /** Watches a worker's own reports: a wedged or failed backend, an exit nobody asked for. */
  #adopt(running: Running): void {
    const { worker } = running;
    const current = () => this.#current === running && !this.#stopping;
    worker.on('message', (message: WorkerMessage) => {
      if (!current()) return;
      if (message.type === 'wedged') this.#restart(`the backend is wedged (${message.message})`);
      else if (message.type === 'failed') this.#restart(`the backend failed (${message.message})`);
    });
    worker.on('error', (error) => {
      if (current()) this.#restart(`the worker failed (${error.message})`);
    });
    worker.on('exit', (code) => {
      if (current()) this.#restart(`the worker exited with ${code}`);
    });
  }

  #restart(reason: string): void {
    if (this.#restarting || this.#stopping) return;
    this.#options.progress(`${reason}: restarting PostGIS`);
    this.#restarting = this.#recover().finally(() => {
      this.#restarting = undefined;
    });
  }

  async #recover(): Promise<void> {
    const begun = Date.now();
    const { progress } = this.#options;
    const old = this.#current;
    // From now on new connections wait; the old worker's are cut (its thread may never close them).
    this.#door.hold();
    this.#door.cut();
    this.#cancelledBefore += old.board.cancelled;
    this.#interrupter?.forget(old.worker);
    if (!(await terminate(old.worker))) {
      progress(
        `the old PostGIS worker did not exit within ${TERMINATE_MS} ms (blocked in a system call?): abandoned`,
      );
    }
    for (let attempt = 1; !this.#stopping; attempt++) {
      let next: Running | undefined;
      try {
        next = await this.#options.relaunch();
        await probe(next.ready.port, this.#options.admin);
        if (this.#stopping) {
          await terminate(next.worker);
          return;
        }
        this.#current = next;
        this.#interruptSent = 0;
        this.#adopt(next);
        this.#restarts += 1;
        this.#door.open(next.ready.port);
        progress(`PostGIS restarted in ${Date.now() - begun} ms (a probe query answered)`);
        return;
      } catch (error) {
        if (next) await terminate(next.worker);
        if (this.#stopping) return;
        const pause = RETRY_PAUSES_MS[Math.min(attempt, RETRY_PAUSES_MS.length) - 1] as number;
        progress(
          `PostGIS restart attempt ${attempt} failed (${error instanceof Error ? error.message : error}); next in ${pause} ms`,
        );
        await delay(pause, this.#stopped.signal);
      }
    }
  }
}

/**
 * Asks a worker to close its port and its database cleanly (a checkpoint: the next open replays
 * nothing), then ends it; a worker that doesn't within 15 s is terminated.
 */
export async function stopWorker(worker: Worker): Promise<void> {
  // A restart given up for a stop left no worker running.
  if (worker.threadId < 0) return;
  worker.ref();
  const done = new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'stopped') resolve();
    });
  });
  worker.postMessage({ type: 'stop' });
  await Promise.race([done, delay(15_000)]);
  await terminate(worker);
}

/** Verifies a worker end to end: a login through its front door and a query that loads PostGIS. */
async function probe(port: number, admin: SupervisorOptions['admin']): Promise<void> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    ...admin,
    connectionTimeoutMillis: PROBE_MS,
    query_timeout: PROBE_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query('SELECT 1 AS ok, postgis_lib_version() AS postgis');
    if (rows[0]?.ok !== 1 || !rows[0]?.postgis)
      throw new Error(`the probe query answered ${JSON.stringify(rows)}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Terminates a worker; false when it didn't exit within {@link TERMINATE_MS}. */
async function terminate(worker: Worker): Promise<boolean> {
  if (worker.threadId < 0) return true;
  const exited = worker.terminate().then(
    () => true,
    () => true,
  );
  return Promise.race([exited, delay(TERMINATE_MS).then(() => false)]);
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A FATAL ErrorResponse, as the server sends before closing a refused connection. */
function fatal(code: string, message: string): Buffer {
  const body = Buffer.concat([
    ...[`SFATAL`, `VFATAL`, `C${code}`, `M${message}`].map((field) => Buffer.from(`${field}\0`, 'utf8')),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** One client connection through the door. */
interface Link {
  client: Socket;
  arrived: number;
  upstream?: Socket;
  /** The worker answered something: the connection can't move to another worker any more. */
  answered: boolean;
  /** The client's bytes so far while unanswered, replayed to the next worker if this one goes. */
  replay: Buffer[];
  /** Bytes before the startup packet, while SSLRequest/GSSENCRequest may still come. */
  preamble: Buffer | undefined;
  /** Its worker is going: what it sent still reaches the client, nothing goes back to it. */
  cut?: boolean;
  holdTimer?: NodeJS.Timeout;
}

/** The public port: relays each connection to the current worker, holds them while there is none. */
export class Door {
  #server: Server | undefined;
  readonly #links = new Set<Link>();
  #upstreamPort: number | undefined;
  #closed = false;

  get port(): number {
    const address = this.#server?.address();
    if (!address || typeof address !== 'object') throw new Error('the PostGIS door is not listening');
    return address.port;
  }

  listen(port: number): Promise<void> {
    const server = createServer({ noDelay: true }, (client) => this.#welcome(client));
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** Relays to the worker on `port`, the held connections first. */
  open(port: number): void {
    this.#upstreamPort = port;
    for (const link of this.#links) {
      if (!link.upstream && !link.answered && link.preamble === undefined && !link.client.destroyed) {
        this.#attach(link);
      }
    }
  }

  /** New connections wait until {@link open}. */
  hold(): void {
    this.#upstreamPort = undefined;
  }

  /**
   * Cuts every relayed connection: unanswered ones wait for the next worker, the others close once
   * what the old worker sent them has reached them (within {@link DRAIN_MS}: a worker that is stuck
   * or abandoned may never close its side).
   */
  cut(): void {
    for (const link of this.#links) {
      const upstream = link.upstream;
      if (!upstream || link.cut) continue;
      if (link.answered) {
        link.cut = true;
        setTimeout(() => upstream.destroy(), DRAIN_MS).unref();
        continue;
      }
      link.upstream = undefined;
      upstream.destroy();
      this.#wait(link);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#upstreamPort = undefined;
    this.#server?.close();
    for (const link of this.#links) {
      link.upstream?.destroy();
      link.client.destroy();
    }
  }

  #welcome(client: Socket): void {
    if (this.#closed) {
      client.destroy();
      return;
    }
    const link: Link = {
      client,
      arrived: Date.now(),
      answered: false,
      replay: [],
      preamble: Buffer.alloc(0),
    };
    this.#links.add(link);
    // A client that never sends its startup packet doesn't keep a socket (the worker's login timeout).
    client.setTimeout(LOGIN_TIMEOUT_MS, () => {
      if (link.preamble !== undefined) client.destroy();
    });
    client.on('error', () => {});
    client.on('close', () => {
      this.#links.delete(link);
      clearTimeout(link.holdTimer);
      link.upstream?.destroy();
    });
    client.on('data', (chunk: Buffer) => this.#fromClient(link, chunk));
  }

  #fromClient(link: Link, chunk: Buffer): void {
    let data = chunk;
    if (link.preamble !== undefined) {
      // SSL and GSS encryption are refused here, as the worker would: only the startup moves on.
      let preamble = Buffer.concat([link.preamble, chunk]);
      while (preamble.length >= 8 && preamble.readInt32BE(0) === 8) {
        const code = preamble.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) break;
        link.client.write('N');
        preamble = preamble.subarray(8);
      }
      if (preamble.length < 8) {
        link.preamble = preamble;
        return;
      }
      link.preamble = undefined;
      link.client.setTimeout(0);
      data = preamble;
      if (this.#upstreamPort === undefined) this.#wait(link);
      else this.#attach(link);
    }
    if (!link.answered) link.replay.push(data);
    const upstream = link.upstream;
    if (!upstream || link.cut) return;
    if (!link.answered && upstream.connecting) return;
    if (!upstream.write(data)) {
      link.client.pause();
      upstream.once('drain', () => link.client.resume());
    }
  }

  #attach(link: Link): void {
    const port = this.#upstreamPort;
    if (port === undefined) {
      this.#wait(link);
      return;
    }
    clearTimeout(link.holdTimer);
    link.holdTimer = undefined;
    const upstream = connect({ host: '127.0.0.1', port, noDelay: true });
    link.upstream = upstream;
    upstream.on('error', () => {});
    upstream.once('connect', () => {
      for (const data of link.replay) upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      link.answered = true;
      link.replay = [];
      if (!link.client.write(data)) {
        upstream.pause();
        link.client.once('drain', () => upstream.resume());
      }
    });
    upstream.on('close', () => {
      if (link.upstream !== upstream) return;
      link.upstream = undefined;
      if (link.answered || link.client.destroyed) this.#finish(link);
      // The worker went before answering (a restart, or not listening yet): try again shortly.
      else this.#wait(link, 100);
    });
  }

  /** Closes a connection once what was relayed to it is sent; one that doesn't take it is destroyed. */
  #finish(link: Link): void {
    link.client.end();
    setTimeout(() => link.client.destroy(), DRAIN_MS).unref();
  }

  /**
   * Holds a connection until a worker serves ({@link open}, or a retry after `retryMs`), answering
   * 57P03 once it has waited {@link HOLD_MS} since it arrived: early enough for a client's connect
   * timeout to leave it time to try again.
   */
  #wait(link: Link, retryMs?: number): void {
    clearTimeout(link.holdTimer);
    link.holdTimer = undefined;
    const giveUpAt = link.arrived + HOLD_MS;
    const now = Date.now();
    if (now >= giveUpAt) {
      link.client.end(fatal('57P03', 'the database system is starting up'));
      return;
    }
    const wakeAt = retryMs === undefined ? giveUpAt : Math.min(now + retryMs, giveUpAt);
    link.holdTimer = setTimeout(() => {
      link.holdTimer = undefined;
      if (link.upstream || link.client.destroyed) return;
      if (Date.now() < giveUpAt && this.#upstreamPort !== undefined) this.#attach(link);
      else this.#wait(link);
    }, wakeAt - now);
  }
}

/**
 * Runs PostgreSQL's alarm on a worker's thread while it executes a statement: an inspector
 * session of this thread, attached to the supervised workers only (NodeWorker domain), evaluates
 * the hook the worker installed ({@link INTERRUPT_HOOK}). V8 runs it at the statement's next
 * stack check, between two instructions, the way a signal interrupts a native backend.
 */
class Interrupter {
  static #shared: Interrupter | undefined;
  readonly #session = new Session();
  /** threadId → inspector session id (a worker attaches before its supervisor knows it). */
  readonly #sessions = new Map<string, string>();
  readonly #replies = new Map<number, (outcome: InterruptOutcome) => void>();
  #users = 0;
  #nextId = 1;

  private constructor() {
    this.#session.connect();
    this.#session.on('NodeWorker.attachedToWorker', ({ params }) => {
      // workerId is the inspector's own numbering; the title names the thread: "[worker <threadId>]".
      const threadId = /\[worker (\d+)\]/.exec(params.workerInfo.title)?.[1];
      if (threadId) this.#sessions.set(threadId, params.sessionId);
    });
    this.#session.on('NodeWorker.detachedFromWorker', ({ params }) => {
      for (const [id, sessionId] of this.#sessions)
        if (sessionId === params.sessionId) this.#sessions.delete(id);
    });
    this.#session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
      const reply = JSON.parse(params.message) as { id?: number; result?: { result?: { value?: unknown } } };
      if (reply.id === undefined) return;
      this.#replies.get(reply.id)?.((reply.result?.result?.value ?? 'idle') as InterruptOutcome);
      this.#replies.delete(reply.id);
    });
    this.#session.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, () => {});
  }

  /** The process's interrupter; undefined when Node was built without the inspector. */
  static acquire(): Interrupter | undefined {
    if (!process.features.inspector) return undefined;
    Interrupter.#shared ??= new Interrupter();
    Interrupter.#shared.#users += 1;
    return Interrupter.#shared;
  }

  /** Gives the interrupter back; the last user disconnects its session. */
  release(): void {
    this.#users -= 1;
    if (this.#users > 0) return;
    this.#session.disconnect();
    if (Interrupter.#shared === this) Interrupter.#shared = undefined;
  }

  /** Detaches from a worker that is no longer supervised. */
  forget(worker: Worker): void {
    const id = String(worker.threadId);
    const sessionId = this.#sessions.get(id);
    this.#sessions.delete(id);
    if (sessionId) this.#session.post('NodeWorker.detach', { sessionId }, () => {});
  }

  /**
   * Asks the worker's thread to deliver a due alarm: what the hook did, or `no-reply` when the
   * thread didn't run it within {@link UNRESPONSIVE_MS} (or isn't attached yet).
   */
  interrupt(worker: Worker): Promise<InterruptOutcome | 'no-reply'> {
    const sessionId = this.#sessions.get(String(worker.threadId));
    if (!sessionId) return delay(UNRESPONSIVE_MS).then(() => 'no-reply');
    const id = this.#nextId++;
    const expression = `String(globalThis[Symbol.for(${JSON.stringify(INTERRUPT_HOOK)})]?.() ?? 'idle')`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#replies.delete(id);
        resolve('no-reply');
      }, UNRESPONSIVE_MS);
      timer.unref();
      this.#replies.set(id, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
      this.#session.post(
        'NodeWorker.sendMessageToWorker',
        {
          sessionId,
          message: JSON.stringify({
            id,
            method: 'Runtime.evaluate',
            params: { expression, returnByValue: true },
          }),
        },
        () => {},
      );
    });
  }
}
