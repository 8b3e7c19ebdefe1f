/**
 * One connection to the import database (ADR 0085) as the loader login: opening it (TLS, or plain
 * when the server refuses TLS under sslmode=prefer), the short transactions every statement runs
 * in, and the mapping of outages to UnavailableError.
 */
import type pg from 'pg';
import { UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { inSubsegment } from '#telemetry/tracer.ts';
import { escapeIdentifier as ident, isDatabaseError, isPostgresOutage, loadPg } from '../pg-driver.ts';

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

/** Opens a client as the loader login; any failure throws UnavailableError. */
export async function connect(config: ImportDatabaseConfig): Promise<pg.Client> {
  const c = config;
  const server = `${c.host}:${c.port}`;
  const mode = c.sslmode ?? 'prefer';
  const open = async (secure: boolean) => {
    const client = new (await loadPg()).Client({
      host: c.host,
      port: c.port,
      database: c.database,
      user: c.user,
      password: c.password,
      ssl: secure ? { rejectUnauthorized: mode === 'verify-full' } : false,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // A client-side deadline too: a server that ignores statement_timeout can't hold a call.
      query_timeout: FINALIZE_TIMEOUT_MS + 30_000,
      application_name: 'geoplane-import',
    });
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  };
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
 * Runs `work` on one new connection as the loader (connect, work, end), in one X-Ray subsegment
 * with its statements (ADR 0092). An outage, or any failure once the connection broke (bad data
 * aside), throws UnavailableError. The import's sessions (ImportDatabase), its previews and the
 * readiness probe all run through here.
 */
export function onConnection<T>(
  config: ImportDatabaseConfig,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return inSubsegment(POSTGIS_IMPORT_SESSION, async () => {
    const client = await connect(config);
    let broken: Error | undefined;
    client.on('error', (error) => {
      broken ??= error;
    });
    try {
      return await work(client);
    } catch (error) {
      if (isOutage(error) || (broken && !(error instanceof ImportInputError))) {
        throw unavailable(broken ?? error);
      }
      throw error;
    } finally {
      await client.end().catch(() => {});
    }
  });
}
