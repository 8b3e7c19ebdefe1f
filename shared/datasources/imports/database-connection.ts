/**
 * One connection to the import database (ADR 0085) as the loader login: opening it (TLS, or plain
 * when the server refuses TLS under sslmode=prefer), the short transactions every statement runs
 * in, and the mapping of outages to UnavailableError. A session that ended cleanly leaves its
 * connection open for the next session of the same login for a few seconds (ADR 0143's update of
 * 2026-12-02, third), as the service pools keep theirs (`postgis.ts`).
 */
import type pg from 'pg';
import { UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { inSubsegment } from '#telemetry/tracer.ts';
import {
  connectionIdentity,
  escapeIdentifier as ident,
  isDatabaseError,
  isPostgresOutage,
  keptPool,
  loadPg,
} from '../pg-driver.ts';

/**
 * How to reach the import database as the loader login. Each published import is read by a login
 * of its own (ADR 0105), whose password derives from the loader's.
 */
export interface ImportDatabaseConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  sslmode?: 'disable' | 'prefer' | 'require' | 'verify-full';
  /**
   * The key reader passwords are derived from (ADR 0118): the secret's `reader_key`, which a
   * rotation of the loader's password leaves alone; the loader's password when there is none.
   */
  readerKey?: string;
}

/** The X-Ray subsegment of one import database session (ADR 0092). */
export const POSTGIS_IMPORT_SESSION = 'postgis import-session';

const CONNECT_TIMEOUT_MS = 5_000;
/** Chunks, publish, preview, cleanup. */
export const STATEMENT_TIMEOUT_MS = 120_000;
/** finalizeLayer rewrites, validates and indexes the whole table. */
export const FINALIZE_TIMEOUT_MS = 15 * 60_000;
const LOCK_TIMEOUT_MS = 30_000;

/** True when the error says the database can't be reached or dropped the connection. */
export const isOutage = (error: unknown): boolean =>
  isPostgresOutage(
    error,
    /timeout exceeded when trying to connect|connection timeout|Connection terminated|Query read timeout|not queryable/i,
  );

/** A statement that failed on its data (class 22, PostGIS' XX000 parse errors), not on the server. */
export function isDataError(error: unknown): boolean {
  if (!isDatabaseError(error)) return false;
  const code = error.code ?? '';
  return code.startsWith('22') || code === 'XX000';
}

/**
 * The database's address, logins and the driver's words stay in the logs (the cause): an import's
 * error is shown to its workspace, and the import database is every workspace's (ADR 0105).
 */
export function unavailable(error: unknown): UnavailableError {
  return new UnavailableError(
    'import_database_unavailable',
    'The import database is unavailable; the import is retried.',
    undefined,
    { cause: error },
  );
}

/**
 * Servers (host and port) that refused TLS under sslmode=prefer: plain from then on, for every
 * session, preview and probe of this process (as the service pools keep it, `postgis.ts`).
 */
const plainText = new Set<string>();

/** The driver's settings for the loader's connections, in TLS or plain. */
function clientConfig(c: ImportDatabaseConfig, secure: boolean): pg.ClientConfig {
  return {
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password: c.password,
    ssl: secure ? { rejectUnauthorized: (c.sslmode ?? 'prefer') === 'verify-full' } : false,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A client-side deadline too: a server that ignores statement_timeout can't hold a call.
    query_timeout: FINALIZE_TIMEOUT_MS + 30_000,
    application_name: 'geoplane-import',
  };
}

/**
 * Opens a connection in TLS unless sslmode or the server says plain (libpq's `prefer`: a server
 * that refuses TLS is talked to in plain, and remembered); any failure throws UnavailableError.
 */
async function opened<C>(config: ImportDatabaseConfig, open: (secure: boolean) => Promise<C>): Promise<C> {
  const server = `${config.host}:${config.port}`;
  const mode = config.sslmode ?? 'prefer';
  try {
    if (mode === 'disable' || (mode === 'prefer' && plainText.has(server))) return await open(false);
    try {
      return await open(true);
    } catch (error) {
      if (mode !== 'prefer' || !(error instanceof Error) || !/does not support SSL/i.test(error.message)) {
        throw error;
      }
      plainText.add(server);
      return await open(false);
    }
  } catch (error) {
    throw unavailable(error);
  }
}

/** Opens a new client as the loader login, kept by no one; any failure throws UnavailableError. */
export function connect(config: ImportDatabaseConfig): Promise<pg.Client> {
  return opened(config, async (secure) => {
    const client = new (await loadPg()).Client(clientConfig(config, secure));
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  });
}

/**
 * Connections per login at once: not a limit of ours (sessions never waited for one another
 * before the pool; a load holds its connection for its whole run), the server's own stays the one.
 */
const POOL_MAX = 100;
/** Logins with kept connections at most (the least recently used pool is closed beyond). */
const MAX_POOLS = 8;

const pools = new Map<string, pg.Pool>();

/**
 * The pool of one login in TLS or plain. A session's connection waits there 10 s for the next
 * session of its login (`keptPool`): a run of an
 * import that resumes another (the next invocation of the same warm function, ADR 0143) or the
 * workflow's next step finds it open: no new TLS handshake, login and PostGIS library load (~50 ms
 * together). A function frozen between invocations holds it until then, as the service pools do.
 */
async function poolOf(c: ImportDatabaseConfig, secure: boolean): Promise<pg.Pool> {
  const key = connectionIdentity(c, secure);
  return keptPool(pools, key, MAX_POOLS, await loadPg(), { ...clientConfig(c, secure), max: POOL_MAX });
}

/** Closes the connections kept for later sessions (the next session of each login connects anew). */
export async function closeKeptConnections(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.end().catch(() => {})));
}

/**
 * True when a session left its connection as it found it: outside a transaction and not in the
 * middle of a statement, so the next session's first statement runs alone.
 */
function reusable(client: pg.PoolClient): boolean {
  return (
    client.getTransactionStatus() === 'I' && (client as { readyForQuery?: boolean }).readyForQuery === true
  );
}

/** Statements on one connection: single ones, transactions, COPY, schema drops. */
export class ImportConnection {
  readonly #client: pg.Client;

  constructor(client: pg.Client) {
    this.#client = client;
  }

  /** One statement (inside `tx`). */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return this.#client.query<R>(text, values);
  }

  /**
   * Runs `work` in one transaction with transaction-local timeouts, UTC and quiet notices; rolls
   * back on any failure (a broken connection is ended by the session, which rolls back too).
   *
   * Without JIT compilation: PostGIS declares its functions costly (ST_IsValid 10,000 a call), so
   * a scan of a staged table looks worth compiling, and LLVM took 1.5 s to compile the finalize's
   * validity scan of 200,000 polygons that runs in a fraction of that (ADR 0143).
   */
  async tx<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
    try {
      // One round trip: BEGIN and the settings in one simple-protocol query.
      await this.#client.query(
        `BEGIN; SET LOCAL statement_timeout = ${Math.round(timeoutMs)}; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS};
         SET LOCAL client_min_messages = warning; SET LOCAL TimeZone = 'UTC'; SET LOCAL jit = off`,
      );
      const result = await work();
      await this.#client.query('COMMIT');
      return result;
    } catch (error) {
      await this.#client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * Runs a streaming query on this connection (in the caller's transaction): a `COPY … FROM STDIN`
   * as pg-copy-streams builds it (database-staging.ts), which is the only module that loads it.
   */
  submit<Q extends pg.Submittable>(query: Q): Q {
    return this.#client.query(query);
  }

  /** Drops the schemas with everything in them (in the caller's transaction). */
  async dropSchemas(schemas: string[]): Promise<void> {
    for (const schema of schemas) await this.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  }
}

/**
 * Runs `work` on one connection as the loader, in one X-Ray subsegment with its statements (ADR
 * 0092): the connection a session of the same login left open, else a new one. It is left open
 * for the next session when `work` succeeded and left it outside a transaction; after a failure
 * it is closed. `fresh` opens a new connection and closes it after (the readiness probe checks
 * the login itself). An outage, or any failure once the connection broke (bad data aside), throws
 * UnavailableError. The import's sessions (ImportDatabase), its previews and the readiness probe
 * all run through here.
 */
export function onConnection<T>(
  config: ImportDatabaseConfig,
  work: (client: pg.Client) => Promise<T>,
  { fresh = false }: { fresh?: boolean } = {},
): Promise<T> {
  return inSubsegment(POSTGIS_IMPORT_SESSION, async () => {
    const pooled = fresh
      ? undefined
      : await opened(config, async (secure) => (await poolOf(config, secure)).connect());
    const client = pooled ?? (await connect(config));
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    let failed = false;
    try {
      return await work(client);
    } catch (error) {
      failed = true;
      if (isOutage(error) || (broken && !(error instanceof ImportInputError))) {
        throw unavailable(broken ?? error);
      }
      throw error;
    } finally {
      client.off('error', onError);
      if (pooled) pooled.release(failed || broken !== undefined || !reusable(pooled) ? true : undefined);
      else await client.end().catch(() => {});
    }
  });
}
