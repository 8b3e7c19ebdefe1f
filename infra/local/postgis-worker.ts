/**
 * The embedded PostGIS, run in a worker thread by `startEmbeddedPostgis` (./postgis.ts, ADR 0030).
 *
 * PGlite executes every statement synchronously on the thread that owns it, so it gets a thread of
 * its own: the host's event loop (HTTP, timers, the `pg` client's timeouts) keeps running while a
 * query does. This module opens (first time: initialises and seeds) the database, then serves it
 * on 127.0.0.1 through pglite-socket's protocol handler behind a front door of ours that does
 * what PGlite cannot: password authentication against `pg_authid`, the database name check, and
 * one role per connection on the single shared backend (ADR 0031).
 */
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { type Extension, PGlite } from '@electric-sql/pglite';
import { postgis } from '@electric-sql/pglite-postgis';
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';
import { INTERRUPT_HOOK, installStatementDeadlines } from './postgis-deadlines.ts';
import { inWholeMessages } from './postgis-frames.ts';
import {
  demoSeedSql,
  importRolesSql,
  loginPasswordSql,
  retireSharedReaderSql,
  serviceRoleHardeningSql,
} from './postgis-seed.ts';
import { type StandbyAhead, startGate } from './postgis-standby.ts';

/** What the parent passes in `workerData`. */
export interface WorkerConfig {
  pgDataDir: string;
  host: string;
  /** 0 under the supervisor: the parent's door owns the public port and relays to this one. */
  port: number;
  /** True when the data directory is new: initialise and seed it (the template's build, ADR 0155). */
  initialise: boolean;
  demoUser: string;
  demoPassword: string;
  adminPassword: string;
  /** The import roles (ADR 0085), created or updated on every start. */
  importer: { user: string; password: string };
  /** The shared import reader of before ADR 0105, retired on every start. */
  retiredReader: string;
  /** A watchdog restart of a running host: the every-start statements ran already (keep restarts quick). */
  restarted?: boolean;
  /**
   * A warm standby (ADR 0142): load PGlite and PostGIS now, post `standby`, and open the data dir
   * only when the parent posts `go` (after the worker that had it is gone: one opener at a time).
   */
  standby?: boolean;
  /** The DeadlineBoard's buffer, shared with the parent's watchdog. */
  deadlines: SharedArrayBuffer;
}

type StatementDeadlines = ReturnType<typeof installStatementDeadlines>;

/** Messages the worker posts to its parent. */
export type WorkerMessage =
  | { type: 'progress'; message: string }
  | { type: 'ready'; port: number; database: string; superuser: string }
  /** A standby has loaded everything but the data dir and waits for `go` (ADR 0142). */
  | { type: 'standby'; ahead: StandbyAhead }
  | { type: 'failed'; message: string }
  /** The backend can't be trusted any more (an answer lost in native code): restart it (ADR 0108). */
  | { type: 'wedged'; message: string }
  | { type: 'stopped' };

/** PGlite's one database and its bootstrap superuser. */
const DATABASE = 'postgres';
const SUPERUSER = 'postgres';
/** A transaction left open this long by an idle client is rolled back and the client cut off. */
const IDLE_IN_TRANSACTION_MS = 60_000;
/** A connection must finish its login within this. */
const LOGIN_TIMEOUT_MS = 10_000;

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3_0 = 196608;

/** Frontend messages PostgreSQL always answers (unless it discards them after an error, until Sync). */
const ANSWERED = 'QPBDECSF';
/** Frontend messages whose answer ends with ReadyForQuery (unless COPY FROM STDIN starts). */
const SYNCED = 'QS';

const post = (message: WorkerMessage) => parentPort?.postMessage(message);
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Verifies a cleartext password against a `pg_authid.rolpassword` value (SCRAM-SHA-256 or md5). */
function passwordMatches(stored: string | null, user: string, password: string): boolean {
  if (stored === null) return false;
  const scram = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(stored);
  if (scram) {
    const [, iterations, salt, storedKey] = scram as unknown as [string, string, string, string];
    const salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), Number(iterations), 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    const computed = createHash('sha256').update(clientKey).digest();
    const expected = Buffer.from(storedKey, 'base64');
    return computed.length === expected.length && timingSafeEqual(computed, expected);
  }
  if (stored.startsWith('md5')) {
    const computed = Buffer.from(
      `md5${createHash('md5')
        .update(password + user)
        .digest('hex')}`,
    );
    const expected = Buffer.from(stored);
    return computed.length === expected.length && timingSafeEqual(computed, expected);
  }
  return false;
}

/** One frontend message: type byte + length + body. */
function frame(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** A FATAL ErrorResponse, as the server sends before closing a refused connection. */
function fatal(code: string, message: string): Buffer {
  const field = (tag: string, value: string) => Buffer.from(`${tag}${value}\0`, 'utf8');
  return frame(
    'E',
    Buffer.concat([
      field('S', 'FATAL'),
      field('V', 'FATAL'),
      field('C', code),
      field('M', message),
      Buffer.from([0]),
    ]),
  );
}

interface Pending {
  /** 0 for the front door's own work. */
  handlerId: number;
  kind: 'message' | 'release' | 'task';
  message?: Uint8Array;
  onData?: (data: Uint8Array) => void;
  task?: () => Promise<unknown>;
  resolve: (value: never) => void;
  reject: (error: Error) => void;
}

/**
 * The single PGlite backend shared by every connection. pglite-socket's own queue hands the
 * backend to the next connection between any two messages unless an explicit transaction is open;
 * this one keeps it with a connection until the backend reports ReadyForQuery/idle after a
 * synchronisation point (simple Query, Sync, end of COPY), so an extended-protocol sequence is never
 * interleaved, and switches `SESSION AUTHORIZATION` to the connection's login role whenever the
 * backend changes hands (ADR 0031). It satisfies the queue contract `PGLiteSocketHandler` uses.
 */
class Backend {
  readonly #db: PGlite;
  readonly #deadlines: StatementDeadlines;
  readonly #roles = new Map<number, string>();
  readonly #sockets = new Map<number, Socket>();
  #queue: Pending[] = [];
  #running = false;
  /** The connection the backend belongs to until it is idle again. */
  #owner: number | null = null;
  /** The owner sent extended-protocol messages without their Sync yet. */
  #midSequence = false;
  /** Whose role the session currently runs as (0 = the superuser). */
  #sessionOf: number | null = null;
  #idleTimer: NodeJS.Timeout | undefined;
  #dead: Error | undefined;
  /** The transaction status of the last ReadyForQuery ('I' idle, 'T' in a transaction, 'E' failed). */
  #status = 'I';
  /** An error ended the owner's extended-protocol messages: PostgreSQL discards the rest until Sync. */
  #discarding = false;

  constructor(db: PGlite, deadlines: StatementDeadlines) {
    this.#db = db;
    this.#deadlines = deadlines;
  }

  /** Runs one protocol exchange, marked busy on the board the parent's watchdog reads. */
  #exchange(message: Uint8Array, onRawData: (data: Uint8Array) => void): Promise<Answer> {
    const answer = new Answer();
    return this.#db.runExclusive(async () => {
      this.#deadlines.board.busy(Date.now());
      try {
        await this.#db.execProtocolRawStream(message, {
          onRawData: (data) => {
            answer.feed(data);
            onRawData(data);
          },
        });
        if (answer.status) this.#status = answer.status;
        return answer;
      } finally {
        this.#deadlines.board.idle();
        this.#deadlines.settle();
      }
    });
  }

  /**
   * A message PostgreSQL always answers that got no answer, or a Query or Sync whose answer
   * stopped short of ReadyForQuery: the statement left the backend somewhere in native code
   * (a PROJ error path does, ADR 0108) with its buffers pinned and its timeout still armed. Nothing
   * it answers can be trusted any more.
   */
  #lost(type: string, startup: boolean, answer: Answer): boolean {
    if (startup) return answer.bytes === 0;
    if (!ANSWERED.includes(type)) return false;
    if (answer.bytes === 0) return !(this.#discarding && type !== 'S' && type !== 'Q');
    return SYNCED.includes(type) && answer.last !== 'Z' && !answer.copyIn;
  }

  /** Registers a connection's login role before its handler starts sending. */
  admit(handlerId: number, role: string, socket: Socket): void {
    this.#roles.set(handlerId, role);
    this.#sockets.set(handlerId, socket);
  }

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return this.#push({ handlerId, kind: 'message', message, onData });
  }

  clearQueueForHandler(handlerId: number): void {
    this.#queue = this.#queue.filter((p) => {
      if (p.handlerId !== handlerId || p.kind !== 'message') return true;
      p.reject(new Error('connection closed'));
      return false;
    });
  }

  /** Called by the handler on disconnect: roll back what the connection left open, forget it. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    await this.#push({ handlerId, kind: 'release' }).catch(() => {});
  }

  /** Runs front-door work as the superuser while no connection owns the backend. */
  run<T>(task: () => Promise<T>): Promise<T> {
    return this.#push({ handlerId: 0, kind: 'task', task });
  }

  /** Simple-protocol query as the superuser; rows as text. For the front door only. */
  async adminQuery(sql: string): Promise<(string | null)[][]> {
    const out = await this.#raw(frame('Q', Buffer.from(`${sql}\0`, 'utf8')));
    const rows: (string | null)[][] = [];
    for (const [type, body] of messages(out)) {
      if (type === 'E') throw new Error(errorText(body));
      if (type !== 'D') continue;
      const row: (string | null)[] = [];
      let at = 2;
      for (let i = body.readInt16BE(0); i > 0; i--) {
        const length = body.readInt32BE(at);
        at += 4;
        row.push(length < 0 ? null : body.subarray(at, at + length).toString('utf8'));
        at += Math.max(length, 0);
      }
      rows.push(row);
    }
    return rows;
  }

  #push<T>(item: Omit<Pending, 'resolve' | 'reject'>): Promise<T> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ ...item, resolve: resolve as (value: never) => void, reject });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    clearTimeout(this.#idleTimer);
    try {
      for (;;) {
        const owner = this.#owner;
        const index =
          owner === null
            ? this.#queue.length > 0
              ? 0
              : -1
            : this.#queue.findIndex((p) => p.handlerId === owner);
        if (index < 0) break;
        const [item] = this.#queue.splice(index, 1) as [Pending];
        try {
          item.resolve((await this.#execute(item)) as never);
        } catch (error) {
          item.reject(error as Error);
          if (!this.#db.ready) this.#die(error as Error);
        }
      }
    } finally {
      this.#running = false;
    }
    const owner = this.#owner;
    if (owner !== null) {
      // Someone holds a transaction open and sends nothing: free the backend eventually.
      this.#idleTimer = setTimeout(() => this.#sockets.get(owner)?.destroy(), IDLE_IN_TRANSACTION_MS);
      this.#idleTimer.unref();
    }
  }

  async #execute(item: Pending): Promise<unknown> {
    if (item.kind === 'task') {
      await this.#becomeRole(0, SUPERUSER);
      return item.task?.();
    }
    if (item.kind === 'release') {
      if (this.#owner === item.handlerId) {
        if (this.#midSequence) await this.#raw(frame('S', Buffer.alloc(0)));
        if (this.#db.isInTransaction()) await this.#raw(frame('Q', Buffer.from('ROLLBACK\0')));
        this.#owner = null;
        this.#midSequence = false;
        this.#discarding = false;
      }
      this.#roles.delete(item.handlerId);
      this.#sockets.delete(item.handlerId);
      return 0;
    }
    const message = item.message as Uint8Array;
    const startup = message[0] === 0;
    const role = this.#roles.get(item.handlerId);
    if (role === undefined) throw new Error('connection was not admitted');
    if (!startup) await this.#becomeRole(item.handlerId, role);
    const type = startup ? '' : String.fromCharCode(message[0] as number);
    // PGlite answers an error inside an extended-protocol sequence with ReadyForQuery at once, and
    // again at the Sync; a client counts both (pg then takes the second for its next query's end),
    // so a ReadyForQuery that ends the answer to anything but a sync point is held back.
    const extended = 'PBDECH'.includes(type) && type !== '';
    const tail = Buffer.alloc(6);
    let held: Buffer | undefined;
    const answer = await this.#exchange(message, (data) => {
      keepTail(tail, data);
      if (!extended) return item.onData?.(data);
      const chunk = held ? Buffer.concat([held, data]) : Buffer.from(data);
      if (chunk.length > 6) item.onData?.(chunk.subarray(0, chunk.length - 6));
      held = Buffer.from(chunk.subarray(Math.max(0, chunk.length - 6)));
    });
    if (this.#lost(type, startup, answer)) {
      const error = new Error(
        `the answer to a ${startup ? 'startup' : `'${type}'`} message was lost inside the backend`,
      );
      this.#wedge(error, item.handlerId);
      throw error;
    }
    if (extended && answer.sawError) this.#discarding = true;
    if (type === 'S' || type === 'Q') this.#discarding = false;
    if (held && !isReadyForQuery(held)) item.onData?.(held);
    // The startup packet may reset session state: assert the role again before the next message.
    if (startup) this.#sessionOf = null;
    // Terminate gets no answer; the connection is going, so is its claim on the backend.
    const syncPoint = startup || 'QSFcf'.includes(type) || (type === 'X' && !this.#db.isInTransaction());
    const idle = type === 'X' || (isReadyForQuery(tail) && tail[5] === 0x49);
    if (syncPoint && idle) {
      this.#owner = null;
      this.#midSequence = false;
    } else {
      this.#owner = item.handlerId;
      this.#midSequence = !syncPoint;
    }
    return answer.bytes;
  }

  async #becomeRole(holder: number, role: string): Promise<void> {
    if (this.#sessionOf === holder) return;
    await this.#handOver();
    const out = await this.#raw(
      frame('Q', Buffer.from(`SET SESSION AUTHORIZATION ${ident(role)}\0`, 'utf8')),
    );
    for (const [type, body] of messages(out)) if (type === 'E') throw new Error(errorText(body));
    this.#sessionOf = holder;
  }

  /**
   * The backend changes hands idle, or not at all: a transaction the last holder left behind
   * (failed, or open because a cancel hit its ROLLBACK) is rolled back, twice at most; a backend
   * that stays in a transaction is wedged (the next holder's statements would all fail with 25P02).
   */
  async #handOver(): Promise<void> {
    for (let attempt = 0; this.#status !== 'I'; attempt++) {
      if (attempt === 2) {
        const error = new Error(`the backend stays in a transaction (status ${this.#status}) after ROLLBACK`);
        this.#wedge(error);
        throw error;
      }
      await this.#raw(frame('Q', Buffer.from('ROLLBACK\0')));
    }
  }

  /**
   * Raw protocol round trip whose output stays here. (PGlite's own `exec`/`query` can't be mixed
   * with `execProtocolRawStream`: after a stream call they send their output to the last stream's
   * callback — a client's socket.)
   */
  async #raw(message: Buffer): Promise<Buffer> {
    const chunks: Uint8Array[] = [];
    const answer = await this.#exchange(new Uint8Array(message), (d) => chunks.push(d.slice()));
    if (this.#lost(String.fromCharCode(message[0] as number), false, answer)) {
      const error = new Error("the answer to the front door's own query was lost inside the backend");
      this.#wedge(error);
      throw error;
    }
    return Buffer.concat(chunks);
  }

  #die(error: Error): void {
    if (this.#dead) return;
    this.#dead = error;
    for (const p of this.#queue.splice(0)) p.reject(error);
    for (const socket of this.#sockets.values()) socket.destroy();
    post({ type: 'failed', message: `PGlite stopped: ${error.message}` });
  }

  /**
   * Stops serving a backend that can't be trusted: the connection whose statement wedged it is
   * told so (FATAL XX000, not an outage its client would retry into the same wedge), every other
   * connection is dropped, and the parent restarts the worker (ADR 0108).
   */
  #wedge(error: Error, culprit?: number): void {
    if (this.#dead) return;
    this.#dead = error;
    for (const p of this.#queue.splice(0)) p.reject(error);
    for (const [handlerId, socket] of this.#sockets) {
      if (handlerId === culprit) {
        socket.end(
          fatal(
            'XX000',
            `the embedded PostGIS could not finish this statement and restarts: ${error.message}`,
          ),
        );
      } else socket.destroy();
    }
    post({ type: 'wedged', message: error.message });
  }
}

/**
 * Follows the backend's answer to one message across its chunks: its size, the last message's
 * type, the transaction status of a ReadyForQuery, whether an ErrorResponse or CopyInResponse came.
 */
class Answer {
  bytes = 0;
  last = '';
  status = '';
  sawError = false;
  copyIn = false;
  readonly #head = Buffer.alloc(5);
  #headLength = 0;
  #left = 0;

  feed(data: Uint8Array): void {
    this.bytes += data.length;
    let at = 0;
    while (at < data.length) {
      if (this.#left > 0) {
        const take = Math.min(this.#left, data.length - at);
        if (this.last === 'Z') this.status = String.fromCharCode(data[at + take - 1] as number);
        this.#left -= take;
        at += take;
        continue;
      }
      const take = Math.min(5 - this.#headLength, data.length - at);
      this.#head.set(data.subarray(at, at + take), this.#headLength);
      this.#headLength += take;
      at += take;
      if (this.#headLength < 5) break;
      this.#headLength = 0;
      this.last = String.fromCharCode(this.#head[0] as number);
      this.#left = this.#head.readInt32BE(1) - 4;
      if (this.last === 'E') this.sawError = true;
      if (this.last === 'G') this.copyIn = true;
    }
  }
}

/** True when the 6 bytes are a ReadyForQuery message (any transaction status). */
function isReadyForQuery(bytes: Buffer): boolean {
  return bytes.length === 6 && bytes[0] === 0x5a && bytes.readInt32BE(1) === 5;
}

/** Keeps the last 6 bytes seen (a ReadyForQuery message is 6 bytes). */
function keepTail(tail: Buffer, data: Uint8Array): void {
  if (data.length >= 6) {
    tail.set(data.subarray(data.length - 6));
  } else {
    tail.copy(tail, 0, data.length);
    tail.set(data, 6 - data.length);
  }
}

function* messages(out: Buffer): Generator<[string, Buffer]> {
  let at = 0;
  while (at + 5 <= out.length) {
    const length = out.readInt32BE(at + 1);
    yield [String.fromCharCode(out[at] as number), out.subarray(at + 5, at + 1 + length)];
    at += 1 + length;
  }
}

function errorText(body: Buffer): string {
  for (const field of body.toString('utf8').split('\0')) if (field.startsWith('M')) return field.slice(1);
  return 'error';
}

/**
 * The front door: SSL refused ('N', as a server without SSL does), startup packet read, database
 * name checked, cleartext password requested and checked against `pg_authid`, then the socket is
 * handed to pglite-socket's handler with the startup packet replayed.
 */
function serve(
  backend: Backend,
  host: string,
  port: number,
): Promise<{ server: Server; close(): Promise<void> }> {
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    socket.on('error', () => {});
    greet(backend, socket);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of connections) socket.destroy();
    });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, close }));
  });
}

function greet(backend: Backend, socket: Socket): void {
  let buffer = Buffer.alloc(0);
  let startup: Buffer | undefined;
  let params: Record<string, string> = {};
  const refuse = (code: string, message: string) => {
    socket.off('data', onData);
    socket.end(fatal(code, message));
  };
  const onData = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (!startup) {
      if (buffer.length < 8) return;
      const length = buffer.readInt32BE(0);
      const code = buffer.readInt32BE(4);
      if (length < 8 || length > 10_000) return refuse('08P01', 'invalid length of startup packet');
      if (buffer.length < length) return;
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        socket.write('N');
        buffer = buffer.subarray(8);
        continue;
      }
      if (code === CANCEL_REQUEST) {
        // PGlite has no second backend to cancel from; the request is dropped, as pglite-socket does.
        socket.off('data', onData);
        socket.end();
        return;
      }
      if (code !== PROTOCOL_3_0) return refuse('08P01', 'unsupported frontend protocol');
      startup = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      const fields = startup.subarray(8).toString('utf8').split('\0');
      params = {};
      for (let i = 0; i + 1 < fields.length && fields[i]; i += 2)
        params[fields[i] as string] = fields[i + 1] ?? '';
      const user = params.user;
      if (!user) return refuse('28000', 'no PostgreSQL user name specified in startup packet');
      const database = params.database || user;
      if (database !== DATABASE) return refuse('3D000', `database "${database}" does not exist`);
      // AuthenticationCleartextPassword: loopback only, and pg answers it like any server's.
      socket.write(frame('R', Buffer.from([0, 0, 0, 3])));
    }
    if (buffer.length < 5) return;
    const length = buffer.readInt32BE(1);
    if (buffer[0] !== 0x70 || length > 10_000) return refuse('08P01', 'expected a password message');
    if (buffer.length < 1 + length) return;
    const password = buffer
      .subarray(5, 1 + length)
      .toString('utf8')
      .replace(/\0$/, '');
    const rest = buffer.subarray(1 + length);
    socket.off('data', onData);
    socket.pause();
    void admit(backend, socket, startup, rest, params.user as string, password);
  };
  socket.on('data', onData);
  // A client that connects and never logs in doesn't keep a socket forever.
  socket.setTimeout(LOGIN_TIMEOUT_MS, () => socket.destroy());
}

async function admit(
  backend: Backend,
  socket: Socket,
  startup: Buffer,
  rest: Buffer,
  user: string,
  password: string,
): Promise<void> {
  let verdict: { code: string; message: string } | undefined;
  try {
    const rows = await backend.run(() =>
      backend.adminQuery(
        'SELECT rolname, rolpassword, rolcanlogin::text, (rolvaliduntil < now())::text FROM pg_authid',
      ),
    );
    const role = rows.find((r) => r[0] === user);
    if (!role || !passwordMatches(role[1] ?? null, user, password) || role[3] === 'true') {
      verdict = { code: '28P01', message: `password authentication failed for user "${user}"` };
    } else if (role[2] !== 'true') {
      verdict = { code: '28000', message: `role "${user}" is not permitted to log in` };
    }
  } catch (error) {
    verdict = { code: '57P03', message: `the database system is not accepting connections: ${error}` };
  }
  if (verdict) {
    socket.end(fatal(verdict.code, verdict.message));
    return;
  }
  const handler = new PGLiteSocketHandler({
    // Our queue honours the contract of pglite-socket's (unexported) QueryQueueManager.
    queryQueue: backend as unknown as PGLiteSocketHandlerOptions['queryQueue'],
    closeOnDetach: true,
  });
  backend.admit(handler.handlerId, user, socket);
  socket.setTimeout(0);
  // The handler joins every piece it is given to what it holds: it is given whole messages.
  inWholeMessages(socket);
  await handler.attach(socket);
  socket.unshift(Buffer.concat([startup, rest]));
  socket.resume();
}

/**
 * Reads the backend's QueryCancelPending: PGlite's Emscripten module exports the variable's
 * address (for extensions' dynamic linking) and its heap. Without them (another PGlite build),
 * every alarm delivered to a running statement counts as its cancel, as before ADR 0108.
 */
function queryCancelPending(db: PGlite): () => boolean {
  const mod = (db as unknown as { mod?: { HEAP32?: Int32Array; _QueryCancelPending?: unknown } }).mod;
  const address = mod?._QueryCancelPending;
  if (!mod?.HEAP32 || typeof address !== 'number') return () => true;
  // HEAP32 is replaced when the heap grows: read it each time.
  return () => (mod.HEAP32 as Int32Array)[address >> 2] !== 0;
}

/** The embedded PostgreSQL's shared buffers, in MB (see main). */
const SHARED_BUFFERS_MB = 32;
/**
 * What a standby writes once ahead for PostgreSQL's shared memory (ADR 0142): 42 MB at these
 * settings (`shared_memory_size`: the buffers, WAL buffers, lock and other tables), and a margin.
 */
const SHARED_MEMORY_AHEAD_BYTES = (SHARED_BUFFERS_MB + 16) * 1024 * 1024;

/** How often the worker looks at how much WAL a restart would replay (ADR 0142). */
const CHECKPOINT_LOOK_MS = 5_000;
/** WAL written since the last checkpoint past which the worker checkpoints (one WAL segment). */
const CHECKPOINT_AFTER_BYTES = 16 * 1024 * 1024;

/**
 * PGlite runs PostgreSQL in single-user mode: no checkpointer process, so nothing checkpoints
 * until max_wal_size (1 GB) is reached, and a restart after a runaway (ADR 0108) replays every
 * byte of WAL written since the host started — 130 MB of inserts made the next open take 1.5 s
 * instead of 0.6 s. Every {@link CHECKPOINT_LOOK_MS}, while no connection holds a transaction
 * open (a front-door task waits for that), the worker checkpoints once more than
 * {@link CHECKPOINT_AFTER_BYTES} of WAL is behind the last one: what a restart replays stays
 * bounded (ADR 0142's update on checkpoints).
 */
function keepRecoveryShort(backend: Backend): NodeJS.Timeout {
  let looking = false;
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    backend
      .run(async () => {
        const [row] = await backend.adminQuery(
          'SELECT pg_current_wal_insert_lsn() - (pg_control_checkpoint()).redo_lsn',
        );
        if (Number(row?.[0] ?? 0) > CHECKPOINT_AFTER_BYTES) await backend.adminQuery('CHECKPOINT');
      })
      .catch(() => {
        // A backend that died or wedged is the supervisor's to restart; the next look tries again.
      })
      .finally(() => {
        looking = false;
      });
  }, CHECKPOINT_LOOK_MS);
  timer.unref();
  return timer;
}

/** Resolves when the parent posts `go` to a standby. */
function goSignal(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== 'go') return;
      parentPort?.off('message', onMessage);
      resolve();
    };
    parentPort?.on('message', onMessage);
  });
}

async function main(config: WorkerConfig): Promise<void> {
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (config.initialise) {
    post({ type: 'progress', message: 'initialising the template: initdb and the PostGIS extension…' });
  }
  // PostgreSQL arms its alarm while it opens the data dir too (its startup progress report, every
  // log_startup_progress_interval): the deadlines follow the alarm from then on. Armed unseen, it
  // fell due inside a statement, was fired by Emscripten's own timer check without PostgreSQL's
  // handler running, and PostgreSQL, taking it as still pending, never armed statement_timeout again.
  let cancelPending: () => boolean = () => false;
  const deadlines = installStatementDeadlines(config.deadlines, () => cancelPending());
  const extensions: Record<string, Extension> = { postgis };
  if (config.standby) {
    extensions.gate = startGate(goSignal(), SHARED_MEMORY_AHEAD_BYTES, (ahead) =>
      post({ type: 'standby', ahead }),
    );
  }
  const db = await PGlite.create({
    dataDir: config.pgDataDir,
    extensions,
    // PostgreSQL's default 128 MB of shared buffers is zeroed at every start, a restart's included
    // (ADR 0142): 32 MB starts ~0.6 s sooner. The data dir's files stay in the OS page cache, so a
    // buffer miss costs a copy, not a disk read.
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS_MB}MB`],
  });
  if (config.initialise) {
    post({
      type: 'progress',
      message: `database created (${seconds()}); installing PostGIS and the demo data…`,
    });
    await db.exec(
      `BEGIN;\n${demoSeedSql(config.demoUser, config.demoPassword)}COMMIT;\nANALYZE;\nCHECKPOINT;\n`,
    );
    post({ type: 'progress', message: `demo data seeded (${seconds()})` });
  }
  cancelPending = queryCancelPending(db);
  // The parent's interrupt runs this on the busy thread (ADR 0108).
  (globalThis as Record<symbol, unknown>)[Symbol.for(INTERRUPT_HOOK)] = deadlines.interrupt;
  const hardening = serviceRoleHardeningSql();
  // On every start: a data dir seeded by an older version gets the same privileges as a new one.
  if (hardening && !config.restarted) await db.exec(hardening);
  if (!config.restarted) {
    // The data dir's own superuser password (its marker's), also when it was copied from the template.
    await db.exec(loginPasswordSql(SUPERUSER, config.adminPassword));
    await db.exec(importRolesSql(config.importer));
    await db.exec(retireSharedReaderSql(config.retiredReader));
  }
  const backend = new Backend(db, deadlines);
  const checkpoints = keepRecoveryShort(backend);
  const { server, close } = await serve(backend, config.host, config.port);
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the PostGIS server has no address');
  parentPort?.on('message', async (message: { type: string }) => {
    if (message.type !== 'stop') return;
    clearInterval(checkpoints);
    await close();
    await backend.run(() => db.close()).catch(() => {});
    post({ type: 'stopped' });
  });
  post({ type: 'ready', port: address.port, database: DATABASE, superuser: SUPERUSER });
}

main(workerData as WorkerConfig).catch((error: unknown) => {
  post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
});
