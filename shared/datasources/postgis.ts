/**
 * PostGIS data sources through `pg`: the same code against the embedded PostGIS locally and
 * RDS/Aurora in AWS (DESIGN §2, §8; ADRs 0032–0034).
 *
 * Every database round trip runs in a `BEGIN READ ONLY` transaction with a transaction-local
 * statement_timeout, lock_timeout and search_path, and under a client-side deadline as well (a
 * server that ignores statement_timeout — PGlite — still can't hold a request). Identifiers are
 * quoted with `escapeIdentifier`; values always travel as parameters.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { DiscoveredLayer, PostgisConnectionInfo, SqlValidation } from '#domain/datasource.ts';
import { DomainError, RuleViolationError, UnavailableError } from '#domain/errors.ts';
import { CONNECTION_TARGET_NOT_ALLOWED } from '#domain/services.ts';
import { inSubsegment } from '#telemetry/tracer.ts';
import { connectionTargets } from './network-policy.ts';
import { escapeIdentifier, isDatabaseError, isPostgresOutage, loadPg } from './pg-driver.ts';
import { checkSql, type HiddenCalls, hiddenCallsQuery, refuseHiddenCalls } from './sql-guard.ts';

/** How to reach a PostGIS database: a service's connection info plus its decrypted password. */
export type PostgisConnection = PostgisConnectionInfo & { password?: string };
export type { DiscoveredLayer };
/** What describeSql found out about a SQL view. */
export type SqlDescription = SqlValidation;

/** Connect timeout, also the wait for a free pooled connection (ADR 0033). */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Catalog reads and extents of discoverLayers, as a whole. */
export const DISCOVERY_BUDGET_MS = 10_000;
/** Default budget of probeLayer. */
export const PROBE_BUDGET_MS = 5_000;
/** The `LIMIT 0` run and the geometry probe of describeSql, as a whole. */
export const DESCRIBE_BUDGET_MS = 5_000;
/** The uniqueness scan of checkIdColumn. */
export const ID_CHECK_BUDGET_MS = 10_000;
/** Waiting for a lock is never worth more than this. */
export const LOCK_TIMEOUT_MS = 2_000;
/** Tables up to this size get an exact ST_Extent when no statistics exist. */
const EXACT_EXTENT_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_SRID = 4326;
const MAX_POOLS = 16;
/** Preferred id column names, best first (matched case-insensitively). */
const ID_NAMES = ['id', 'fid', 'gid', 'ogc_fid', 'objectid', 'feature_id'];

/** A statement ran out of its budget (server statement_timeout or the client-side deadline). */
export class BudgetExceededError extends Error {}

/** Runs one statement inside the read-only transaction. */
export type ReadOnlyQuery = <R extends pg.QueryResultRow = Record<string, unknown>>(
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>;

const pools = new Map<string, pg.Pool>();
/** Identities whose server refused TLS under sslmode=prefer: they talk plain from then on. */
const plainText = new Set<string>();

function identity(c: PostgisConnection): string {
  const secret = createHash('sha256')
    .update(c.password ?? '')
    .digest('base64url');
  return JSON.stringify([c.host, c.port, c.database, c.user, secret, c.sslmode ?? 'prefer']);
}

/** A connection pinned to the address the network policy checked; TLS still names the host (ADR 0074). */
type PinnedConnection = PostgisConnection & { servername?: string };

/**
 * Checks `c.host:c.port` against the network policy and pins the connection to the checked
 * address, so a second DNS answer can't redirect it (ADR 0074). Refusals throw RuleViolationError
 * `connection_target_not_allowed`; a name that does not resolve throws the resolver's error.
 */
async function pinned(c: PostgisConnection): Promise<PinnedConnection> {
  const target = await connectionTargets().check(c.host, c.port);
  return { ...c, host: target.address, ...(target.servername ? { servername: target.servername } : {}) };
}

/**
 * A failed test-connection (also behind createService/updateService) answers no sooner than this,
 * so its timing doesn't tell a closed port from a silent host (ADR 0074).
 */
const FAILED_CONNECT_FLOOR_MS = CONNECT_TIMEOUT_MS;

async function settle(startedAt: number): Promise<void> {
  const wait = startedAt + FAILED_CONNECT_FLOOR_MS - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

function clientConfig(c: PinnedConnection, key: string): pg.ClientConfig {
  const mode = c.sslmode ?? 'prefer';
  const ssl =
    mode === 'disable' || (mode === 'prefer' && plainText.has(key))
      ? false
      : {
          rejectUnauthorized: mode === 'verify-full',
          // pg dials the checked IP; SNI and verify-full need the name the service gave.
          ...(c.servername ? { servername: c.servername } : {}),
        };
  return {
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password: c.password ?? '',
    ssl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'geoplane',
  };
}

/** A small pool per connection identity, least recently used evicted beyond {@link MAX_POOLS}. */
function poolFor(driver: typeof pg, c: PostgisConnection, key: string): pg.Pool {
  const cached = pools.get(key);
  if (cached) {
    pools.delete(key);
    pools.set(key, cached);
    return cached;
  }
  const pool = new driver.Pool({
    ...clientConfig(c, key),
    max: POOL_SIZE,
    idleTimeoutMillis: 10_000,
    // Lambdas and tests must be free to exit with idle connections open.
    allowExitOnIdle: true,
  });
  // An idle connection the server dropped: the pool discards it, the next checkout reconnects.
  pool.on('error', () => {});
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, old] = pools.entries().next().value as [string, pg.Pool];
    pools.delete(oldest);
    void old.end().catch(() => {});
  }
  return pool;
}

/** Connections per pool; a unit of work beyond them waits for one to be free (see `acquireSlot`). */
const POOL_SIZE = 3;

/** The free connections of each pool and who waits for one, in arrival order. */
const slots = new Map<string, { free: number; waiting: (() => void)[] }>();

/**
 * Waits until one of the pool's connections is free, for as long as the unit of work's budget
 * allows. pg-pool's own wait for a free client shares `connectionTimeoutMillis` with connecting,
 * so a burst of requests beyond the pool got a 503 after 2 s while the server was fine; the wait
 * is ours now and `connectionTimeoutMillis` only times a real connect. Returns the release.
 */
async function acquireSlot(c: PostgisConnection, key: string, deadline: number): Promise<() => void> {
  let pool = slots.get(key);
  if (!pool) {
    pool = { free: POOL_SIZE, waiting: [] };
    slots.set(key, pool);
  }
  const own = pool;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    // A waiter takes the connection over; otherwise it is free again.
    const next = own.waiting.shift();
    if (next) next();
    else own.free++;
  };
  if (own.free > 0) {
    own.free--;
    return release;
  }
  await new Promise<void>((resolve, reject) => {
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(
      () => {
        own.waiting.splice(own.waiting.indexOf(wake), 1);
        reject(
          new UnavailableError(
            'datasource_busy',
            `The data source ${c.host}:${c.port}/${c.database} is busy: all ${POOL_SIZE} of its connections stayed in use; retry shortly.`,
          ),
        );
      },
      Math.max(0, deadline - Date.now()),
    );
    own.waiting.push(wake);
  });
  return release;
}

function dropPool(key: string): void {
  const pool = pools.get(key);
  pools.delete(key);
  void pool?.end().catch(() => {});
}

/** A pooled connection and its slot, checked out together and given back together. */
type Checkout = { client: pg.PoolClient; release: () => void };

/** A pooled connection to the checked address (pools are per identity, the address included). */
async function checkout(c: PostgisConnection, deadline: number): Promise<Checkout> {
  let release: (() => void) | undefined;
  try {
    const target = await pinned(c);
    const key = identity(target);
    const driver = await loadPg();
    release = await acquireSlot(c, key, deadline);
    try {
      return { client: await poolFor(driver, target, key).connect(), release };
    } catch (error) {
      if ((c.sslmode ?? 'prefer') !== 'prefer' || plainText.has(key) || !refusesTls(error)) throw error;
      // libpq's `prefer`: the server has no TLS, so talk plain.
      plainText.add(key);
      dropPool(key);
      return { client: await poolFor(driver, target, key).connect(), release };
    }
  } catch (error) {
    release?.();
    throw connectFailure(c, error);
  }
}

/** Returns a connection opened ahead of a unit of work that will not run (a failed connect needs nothing). */
function giveBack(connecting: Promise<Checkout>): void {
  connecting.then(
    ({ client, release }) => {
      client.release();
      release();
    },
    () => {},
  );
}

function refusesTls(error: unknown): boolean {
  return error instanceof Error && /does not support SSL/i.test(error.message);
}

/** Refusals that mean "we may not read", not "it is down": the login, the database, TLS setup. */
const REFUSAL_SQLSTATES = new Set(['28P01', '28000', '3D000', '42501']);

/** True when the error says the data source can't be reached (ADR 0034). */
const isOutage = (error: unknown): boolean =>
  isPostgresOutage(
    error,
    /timeout exceeded when trying to connect|connection timeout|Connection terminated/i,
  );

/**
 * A connect failure as a domain error (ADRs 0034, 0074). Only what a PostgreSQL server itself
 * answered is told apart, with its words: a refused login or database (its SQLSTATE), "no TLS"
 * to our TLS request, a certificate that failed verification after the TLS handshake. Everything
 * else — refused, reset, timed out, unresolvable, a listener that isn't PostgreSQL, a TLS
 * handshake with a stranger — is one outage whose message names no cause: the answers can't map
 * what listens where. The network policy's refusal passes through.
 */
function connectFailure(c: PostgisConnection, error: unknown): Error {
  if (error instanceof DomainError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const where = `${c.host}:${c.port}/${c.database}`;
  if (typeof code === 'string' && REFUSAL_SQLSTATES.has(code)) {
    return new RuleViolationError(
      'source_unreadable',
      `The data source ${where} refused the login: ${message} (SQLSTATE ${code}).`,
    );
  }
  if (refusesTls(error) || isCertificateFailure(error)) {
    return new RuleViolationError(
      'source_unreadable',
      `TLS to ${where} failed (sslmode=${c.sslmode ?? 'prefer'}): ${message}.`,
    );
  }
  return new UnavailableError(
    'datasource_unavailable',
    `The data source ${where} is unavailable: it could not be reached, or did not answer as PostgreSQL.`,
    undefined,
    { cause: error },
  );
}

/** A certificate verification error (verify-full): it needs a finished TLS handshake after the server's "S". */
function isCertificateFailure(error: unknown): boolean {
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  return /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
}

/** The error a statement's failure stands for, once the transaction is given up. */
function statementFailure(c: PostgisConnection, error: unknown): Error {
  if (error instanceof BudgetExceededError) return error;
  if ((error as { code?: unknown }).code === '57014') {
    return new BudgetExceededError((error as Error).message);
  }
  if (isOutage(error)) {
    return new UnavailableError(
      'datasource_unavailable',
      `The data source ${c.host}:${c.port}/${c.database} is unavailable: ${(error as Error).message}.`,
      undefined,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** What a read-only unit of work learns about the database when it starts. */
export interface SessionInfo {
  /** The PostGIS extension version, null when PostGIS is not installed. */
  postgis: string | null;
  /** The role the connection runs as. */
  user: string;
}

/**
 * Runs `work` in one `BEGIN READ ONLY` transaction on a pooled connection with transaction-local
 * statement_timeout (the budget), lock_timeout and search_path (the service's schemas, public and
 * the schema PostGIS lives in). Each statement also has a client-side deadline at the end of the
 * budget. The connection is always released — destroyed when it may be unusable. Throws
 * UnavailableError for outages, RuleViolationError('source_unreadable') for refused logins.
 */
export function readOnly<T>(
  c: PostgisConnection,
  budgetMs: number,
  work: (query: ReadOnlyQuery, session: SessionInfo) => Promise<T>,
  connecting?: Promise<Checkout>,
): Promise<T> {
  // One X-Ray subsegment per unit of work, its retries included (ADR 0092).
  return inSubsegment(POSTGIS_READ_ONLY, () => readOnlyWithin(c, budgetMs, work, connecting), {
    budget_ms: budgetMs,
  });
}

/** The X-Ray subsegment of a PostGIS unit of work (`readOnly`) and of a connection test (ADR 0092). */
export const POSTGIS_READ_ONLY = 'postgis read-only';
export const POSTGIS_TEST_CONNECTION = 'postgis test-connection';

async function readOnlyWithin<T>(
  c: PostgisConnection,
  budgetMs: number,
  work: (query: ReadOnlyQuery, session: SessionInfo) => Promise<T>,
  connecting?: Promise<Checkout>,
): Promise<T> {
  const started = Date.now();
  const deadline = started + budgetMs;
  const recoverUntil = started + Math.min(budgetMs - 250, RECOVERY_WINDOW_MS);
  // A server that says it is starting up (57P03: the embedded PostGIS restarting, ADR 0108; a
  // rebooting or failing-over RDS) is coming back: worth waiting for until the budget is nearly spent.
  const startingUpUntil = Math.max(recoverUntil, deadline - STARTUP_RESERVE_MS);
  for (let pause = 100; ; pause = Math.min(pause * 2, 400)) {
    try {
      // The first attempt takes a connection already on its way (`connecting`); retries open their own.
      const first = connecting;
      connecting = undefined;
      return await readOnlyOnce(c, deadline, budgetMs, work, first);
    } catch (error) {
      // A read-only unit can be run again: a backend that was just restarted (the embedded
      // PostGIS after a runaway statement, a failover) gets retries within the budget, a
      // connection it dropped included. A host that doesn't answer at all has had its connect
      // timeout: no second wait.
      if (!(error instanceof UnavailableError) || causedBy(error, isConnectTimeout)) throw error;
      const until = causedBy(error, isStartingUp) ? startingUpUntil : recoverUntil;
      if (Date.now() + pause >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * How long a unit of work retries an outage before it answers one (within its budget): long
 * enough for the embedded PostGIS to restart under a runaway statement (2–5 s here).
 */
const RECOVERY_WINDOW_MS = 5_000;
/** Left of the budget for the work itself once a server that was starting up answers. */
const STARTUP_RESERVE_MS = 500;

/** True when `error` or one of its causes satisfies `test`. */
function causedBy(error: unknown, test: (cause: Error) => boolean): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (test(at)) return true;
  }
  return false;
}

/** pg's connect timeout, from a client or from the pool. */
function isConnectTimeout(error: Error): boolean {
  return /^timeout expired$|due to connection timeout|timeout exceeded when trying to connect/i.test(
    error.message,
  );
}

/** PostgreSQL's cannot_connect_now: starting up, in recovery, (the embedded PostGIS) restarting. */
function isStartingUp(error: Error): boolean {
  return (error as { code?: unknown }).code === '57P03';
}

/** A connection lost within this of the end of the budget was lost to the budget (a hard stop). */
const OVERRUN_SLACK_MS = 1_000;

async function readOnlyOnce<T>(
  c: PostgisConnection,
  deadline: number,
  budgetMs: number,
  work: (query: ReadOnlyQuery, session: SessionInfo) => Promise<T>,
  connecting?: Promise<Checkout>,
): Promise<T> {
  const { client, release } = await (connecting ?? checkout(c, deadline));
  let broken: Error | undefined;
  // A connection that dies while checked out (a restarted backend) must not be an uncaught error.
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  const query: ReadOnlyQuery = async (text, values) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new BudgetExceededError(`the ${budgetMs} ms budget is spent`);
    try {
      // pg's per-query read timeout; not in @types/pg's QueryConfig.
      return await client.query({ text, values, query_timeout: remaining + 250 } as pg.QueryConfig);
    } catch (error) {
      if (error instanceof Error && error.message === 'Query read timeout') {
        broken = error;
        throw new BudgetExceededError(`no answer within ${budgetMs} ms`);
      }
      if (isOutage(error)) {
        broken = error as Error;
        // Dropped at the end of its budget: the server stopped a runaway statement (the embedded
        // PostGIS restarts under one that ignores its cancel) — an overrun, not an outage.
        if (Date.now() >= deadline - OVERRUN_SLACK_MS) {
          throw new BudgetExceededError(`stopped at the end of its ${budgetMs} ms budget`);
        }
      }
      throw error;
    }
  };
  try {
    await query('BEGIN READ ONLY');
    const schemas = (c.schemas?.length ? c.schemas : ['public']).map((s) => escapeIdentifier(s));
    if (!schemas.includes('"public"')) schemas.push('"public"');
    const setup = await query<{ postgis: string | null; user: string }>(
      `SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $2, true),
              set_config('search_path', $3 || coalesce((SELECT ', ' || quote_ident(n.nspname)
                FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'postgis'), ''), true),
              (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'postgis') AS postgis,
              current_user AS "user"`,
      [`${budgetMs}ms`, `${Math.min(LOCK_TIMEOUT_MS, budgetMs)}ms`, schemas.join(', ')],
    );
    const session = setup.rows[0] as SessionInfo;
    const result = await work(query, session);
    await query('ROLLBACK');
    return result;
  } catch (error) {
    if (!broken) {
      try {
        await client.query({ text: 'ROLLBACK', query_timeout: CONNECT_TIMEOUT_MS } as pg.QueryConfig);
      } catch (rollback) {
        broken = rollback as Error;
      }
    }
    throw statementFailure(c, error);
  } finally {
    client.off('error', onError);
    client.release(broken ?? false);
    release();
  }
}

/**
 * Runs one statement in a savepoint: a database error (other than a timeout) rolls back to it and
 * is returned, so the transaction goes on.
 */
async function attempt<R extends pg.QueryResultRow>(
  query: ReadOnlyQuery,
  text: string,
  values?: unknown[],
): Promise<{ rows: R[]; error?: undefined } | { rows?: undefined; error: pg.DatabaseError }> {
  await query('SAVEPOINT attempt');
  try {
    const { rows } = await query<R>(text, values);
    await query('RELEASE SAVEPOINT attempt');
    return { rows };
  } catch (error) {
    if (!isDatabaseError(error) || error.code === '57014') throw error;
    await query('ROLLBACK TO SAVEPOINT attempt');
    return { error };
  }
}

/**
 * Opens a fresh connection (not pooled) to the address the network policy checked, runs one
 * query, checks PostGIS is installed. A target the policy refuses throws RuleViolationError
 * `connection_target_not_allowed` (ADR 0074); every other failure is `ok: false` with the reason
 * (the uniform outage message for anything but PostgreSQL's own answers).
 */
export function testConnection(
  c: PostgisConnection,
): Promise<{ ok: boolean; duration_ms: number; message?: string }> {
  return inSubsegment(POSTGIS_TEST_CONNECTION, () => testConnectionOnce(c));
}

async function testConnectionOnce(
  c: PostgisConnection,
): Promise<{ ok: boolean; duration_ms: number; message?: string }> {
  const started = performance.now();
  const done = (ok: boolean, message: string) => ({
    ok,
    duration_ms: Math.round(performance.now() - started),
    message,
  });
  const connect = async (target: PinnedConnection, key: string): Promise<pg.Client> => {
    const client = new (await loadPg()).Client(clientConfig(target, key));
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      // Not client.end(): after a failed TLS upgrade it can wait forever on the half-open socket.
      void client.end().catch(() => {});
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      if ((c.sslmode ?? 'prefer') === 'prefer' && !plainText.has(key) && refusesTls(error)) {
        plainText.add(key);
        return connect(target, key);
      }
      throw error;
    }
  };
  let client: pg.Client | undefined;
  try {
    const target = await pinned(c);
    client = await connect(target, identity(target));
    const { rows } = await client.query({
      text: `SELECT current_setting('server_version') AS server,
                    (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'postgis') AS postgis`,
      query_timeout: CONNECT_TIMEOUT_MS,
    } as pg.QueryConfig);
    const { server, postgis } = rows[0] as { server: string; postgis: string | null };
    if (!postgis) return done(false, `Connected to PostgreSQL ${server}, but PostGIS is not installed.`);
    return done(true, `Connected to PostgreSQL ${server} with PostGIS ${postgis}.`);
  } catch (error) {
    const failure = connectFailure(c, error);
    if (failure instanceof DomainError && failure.reason === CONNECTION_TARGET_NOT_ALLOWED) throw failure;
    if (!(failure instanceof UnavailableError)) return done(false, failure.message);
    // The target can't be reached (refused, timed out, unresolvable, not PostgreSQL): that is the
    // test's answer, not an outage of ours (ADR 0087), said the one way ADR 0074 allows.
    await settle(started);
    return done(
      false,
      `Could not connect to ${c.host}:${c.port}/${c.database}: it could not be reached, or did not answer as PostgreSQL.`,
    );
  } finally {
    await client?.end().catch(() => {});
  }
}

interface GeometryColumnRow {
  oid: number;
  schema: string;
  table: string;
  kind: string;
  column: string;
  type: string;
  srid: number;
  bytes: string;
}

/** Geometry columns of readable relations in the service's schemas, first per relation. */
const GEOMETRY_COLUMNS = `
SELECT DISTINCT ON (n.nspname, c.relname)
       c.oid::int AS oid, n.nspname AS schema, c.relname AS "table", c.relkind::text AS kind,
       a.attname AS "column", upper(postgis_typmod_type(a.atttypmod)) AS type,
       postgis_typmod_srid(a.atttypmod) AS srid,
       CASE WHEN c.relkind IN ('r', 'm') THEN pg_catalog.pg_relation_size(c.oid) END AS bytes
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE t.typname = 'geometry'
  AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND NOT c.relispartition`;

/**
 * The relation a layer's `source_layer` names (`schema.table`, or a bare name found along the
 * service's schemas in order; $1 the name, $2 the schemas): its oid, schema and name, then `extra`.
 */
export function relationLookupSql(extra = ''): string {
  return `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS "table"${extra}
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname = ANY($2::text[])
       AND (n.nspname || '.' || c.relname = $1 OR c.relname = $1)
     ORDER BY n.nspname || '.' || c.relname = $1 DESC, array_position($2::text[], n.nspname::text)
     LIMIT 1`;
}

/**
 * Of `sourceLayers`, the ones no relation of the service's schemas answers to (the catalog
 * integrity check, ADR 0138): one read-only session, one catalog lookup per name. Outages throw
 * UnavailableError; a refused login RuleViolationError, as every read here.
 */
export async function missingRelations(
  c: PostgisConnection,
  sourceLayers: readonly string[],
  budgetMs = PROBE_BUDGET_MS,
): Promise<string[]> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  return readOnly(c, budgetMs, async (query) => {
    const missing: string[] = [];
    for (const name of new Set(sourceLayers)) {
      const found = await query(relationLookupSql(), [name, schemas]);
      if (found.rows.length === 0) missing.push(name);
    }
    return missing;
  });
}

const READABLE = `pg_catalog.has_schema_privilege(n.oid, 'USAGE') AND pg_catalog.has_table_privilege(c.oid, 'SELECT')`;

/**
 * Readable geometry tables, views, materialized views and partitioned tables of `c.schemas`
 * (default `['public']`), one layer per relation (its first geometry column). Extents come from
 * ST_EstimatedExtent (planner statistics), else ST_Extent for tables up to 8 MB, else null.
 */
export async function discoverLayers(c: PostgisConnection): Promise<DiscoveredLayer[]> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  try {
    return await readOnly(c, DISCOVERY_BUDGET_MS, async (query, session) => {
      if (!session.postgis) throw noPostgis(c);
      const { rows } = await query<GeometryColumnRow>(
        `${GEOMETRY_COLUMNS} AND n.nspname = ANY($1::text[]) AND ${READABLE} ORDER BY n.nspname, c.relname, a.attnum`,
        [schemas],
      );
      rows.sort((a, b) => schemas.indexOf(a.schema) - schemas.indexOf(b.schema));
      const layers: DiscoveredLayer[] = [];
      for (const row of rows) layers.push(await describeLayer(query, row));
      return layers;
    });
  } catch (error) {
    // A source that can't list its tables in time is as good as down; one that fails to is not.
    if (error instanceof BudgetExceededError) {
      throw new UnavailableError(
        'datasource_unavailable',
        `The data source ${c.host}:${c.port}/${c.database} did not list its layers within ${DISCOVERY_BUDGET_MS} ms.`,
      );
    }
    if (isDatabaseError(error)) {
      throw new RuleViolationError('source_unreadable', `Discovery failed: ${error.message}.`);
    }
    throw error;
  }
}

function noPostgis(c: PostgisConnection): RuleViolationError {
  return new RuleViolationError(
    'source_unreadable',
    `PostGIS is not installed in the database ${c.host}:${c.port}/${c.database}.`,
  );
}

/** Normalises a typmod type name to GeometryType()'s spelling: `PointZ` → `POINT`, `PointM` → `POINTM`. */
function geometryTypeName(typmodType: string): string {
  return typmodType.toUpperCase().replace(/ZM?$/, '');
}

async function describeLayer(query: ReadOnlyQuery, row: GeometryColumnRow): Promise<DiscoveredLayer> {
  const relation = `${escapeIdentifier(row.schema)}.${escapeIdentifier(row.table)}`;
  const column = escapeIdentifier(row.column);
  let srid = row.srid;
  if (srid === 0) {
    // An unconstrained column: the first feature tells the SRID.
    const first = await attempt<{ srid: number }>(
      query,
      `SELECT ST_SRID(${column}) AS srid FROM ${relation} WHERE ${column} IS NOT NULL LIMIT 1`,
    );
    srid = first.rows?.[0]?.srid ?? 0;
  }
  return {
    schema: row.schema,
    table: row.table,
    name: row.schema === 'public' ? row.table : `${row.schema}.${row.table}`,
    geometry_column: row.column,
    geometry_type: geometryTypeName(row.type),
    srid: srid || DEFAULT_SRID,
    extent: await extentOf(query, row, relation, column),
  };
}

type Extent = NonNullable<DiscoveredLayer['extent']>;

async function extentOf(
  query: ReadOnlyQuery,
  row: GeometryColumnRow,
  relation: string,
  column: string,
): Promise<Extent | null> {
  const corners = `ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y`;
  if (row.kind === 'r' || row.kind === 'm' || row.kind === 'p') {
    const estimated = await attempt<Extent>(
      query,
      `SELECT ${corners} FROM (SELECT ST_EstimatedExtent($1, $2, $3) AS e) s WHERE e IS NOT NULL`,
      [row.schema, row.table, row.column],
    );
    if (estimated.rows?.[0]) return estimated.rows[0];
  }
  if (row.bytes !== null && Number(row.bytes) <= EXACT_EXTENT_MAX_BYTES) {
    const exact = await attempt<Extent>(
      query,
      `SELECT ${corners} FROM (SELECT ST_Extent(${column}) AS e FROM ${relation}) s WHERE e IS NOT NULL`,
    );
    if (exact.rows?.[0]) return exact.rows[0];
  }
  return null;
}

/**
 * Checks that `sourceLayer` (`schema.table`, or a table found in `c.schemas` in order) exists in
 * the service's schemas, has a geometry column and that one feature reads within `budgetMs`
 * (an empty table reads fine). Problems with the layer are `ok: false` with the reason; outages
 * throw UnavailableError, refused logins RuleViolationError('source_unreadable').
 */
export async function probeLayer(
  c: PostgisConnection,
  sourceLayer: string,
  budgetMs = PROBE_BUDGET_MS,
): Promise<{ ok: true; layer: DiscoveredLayer } | { ok: false; reason: string }> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  try {
    return await readOnly(c, budgetMs, async (query, session) => {
      if (!session.postgis) return { ok: false, reason: noPostgis(c).message };
      const found = await query<{ oid: number; schema: string; table: string; readable: boolean }>(
        relationLookupSql(`, ${READABLE} AS readable`),
        [sourceLayer, schemas],
      );
      const relation = found.rows[0];
      if (!relation) {
        return {
          ok: false,
          reason: `The source layer "${sourceLayer}" does not exist in the schema(s) ${schemas.join(', ')}.`,
        };
      }
      const qualified = `${relation.schema}.${relation.table}`;
      const { rows } = await query<GeometryColumnRow>(
        `${GEOMETRY_COLUMNS} AND c.oid = $1 ORDER BY n.nspname, c.relname, a.attnum`,
        [relation.oid],
      );
      const row = rows[0];
      if (!row) return { ok: false, reason: `The source layer "${qualified}" has no geometry column.` };
      if (!relation.readable) {
        return {
          ok: false,
          reason: `Permission denied: the role "${session.user}" can't read "${qualified}".`,
        };
      }
      const read = await attempt(
        query,
        `SELECT * FROM ${escapeIdentifier(relation.schema)}.${escapeIdentifier(relation.table)} LIMIT 1`,
      );
      if (read.error) {
        return { ok: false, reason: `A feature of "${qualified}" could not be read: ${read.error.message}.` };
      }
      return { ok: true, layer: await describeLayer(query, row) };
    });
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      return { ok: false, reason: `No feature of "${sourceLayer}" could be read within ${budgetMs} ms.` };
    }
    if (isDatabaseError(error)) {
      return {
        ok: false,
        reason: `The source layer "${sourceLayer}" could not be inspected: ${error.message}.`,
      };
    }
    throw error;
  }
}

interface TypeRow {
  oid: number;
  name: string;
  category: string;
}

/** The JSON type a PostgreSQL type's values take in a feature's properties. */
function jsonType(type: TypeRow | undefined): string {
  if (!type) return 'string';
  if (type.category === 'A') return 'array';
  if (['int2', 'int4', 'int8'].includes(type.name)) return 'integer';
  if (type.category === 'N') return 'number';
  if (type.category === 'B') return 'boolean';
  if (type.name === 'json' || type.name === 'jsonb') return 'object';
  return 'string';
}

/**
 * Resolves what the guard could not decide from the tree alone (attribute notation, operators) in
 * this database's catalog; the refusal's message, or undefined when nothing hides a call.
 */
export async function hiddenCallRefusal(
  query: ReadOnlyQuery,
  calls: HiddenCalls,
): Promise<string | undefined> {
  if (calls.attributeNames.length === 0 && calls.operators.length === 0) return undefined;
  const { rows } = await query<{ functions: string[]; operators: string[] }>(hiddenCallsQuery, [
    calls.attributeNames,
    calls.operators,
  ]);
  return refuseHiddenCalls(rows[0] ?? { functions: [], operators: [] });
}

/** The SQL of a view as a subquery: trailing semicolons off, newlines so a `--` comment can't eat `)`. */
export function subquery(sql: string): string {
  return `(\n${sql.replace(/[\s;]+$/, '')}\n) AS q`;
}

/**
 * Validates a SQL view: the SQL gate first, then `SELECT * FROM (<sql>) q LIMIT 0` for the columns
 * and a one-row probe of the first geometry column for GeometryType() and SRID (4326 when
 * unknown), read-only and within {@link DESCRIBE_BUDGET_MS}. A refused or failing query is
 * `valid: false` with the reason; outages throw UnavailableError.
 */
export async function describeSql(c: PostgisConnection, sql: string): Promise<SqlDescription> {
  // The connection opens beside the parse (issue #27): a cold request waits for the longer of the
  // two, not for both. Nothing runs on it before the guard has said yes; a refusal gives it back.
  const connecting = checkout(c, Date.now() + DESCRIBE_BUDGET_MS);
  connecting.catch(() => {});
  let guard: Awaited<ReturnType<typeof checkSql>>;
  try {
    guard = await checkSql(sql, c.schemas);
  } catch (error) {
    giveBack(connecting);
    throw error;
  }
  if (!guard.ok) {
    giveBack(connecting);
    return { valid: false, error: guard.error };
  }
  try {
    return await readOnly(
      c,
      DESCRIBE_BUDGET_MS,
      async (query, session): Promise<SqlDescription> => {
        if (!session.postgis) return { valid: false, error: noPostgis(c).message };
        const hidden = await hiddenCallRefusal(query, guard);
        if (hidden) return { valid: false, error: hidden };
        const shape = await query(`SELECT * FROM ${subquery(sql)} LIMIT 0`);
        const fields = shape.fields;
        if (fields.length === 0) return { valid: false, error: 'The query returns no columns.' };
        const seen = new Set<string>();
        for (const field of fields) {
          if (seen.has(field.name)) {
            return { valid: false, error: `The query returns the column "${field.name}" more than once.` };
          }
          seen.add(field.name);
        }
        const types = await query<TypeRow>(
          `SELECT t.oid::int AS oid, coalesce(b.typname, t.typname) AS name, coalesce(b.typcategory, t.typcategory) AS category
         FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
         WHERE t.oid = ANY($1::oid[])`,
          [[...new Set(fields.map((f) => f.dataTypeID))]],
        );
        const typeOf = new Map(types.rows.map((t) => [t.oid, t]));
        const isGeometry = (f: pg.FieldDef) => typeOf.get(f.dataTypeID)?.name === 'geometry';
        const geometry = fields.find(isGeometry);
        if (!geometry) return { valid: false, error: 'The query must return at least one geometry column.' };
        const g = `q.${escapeIdentifier(geometry.name)}`;
        const probe = await query<{ type: string; srid: number }>(
          `SELECT GeometryType(${g}) AS type, ST_SRID(${g}) AS srid FROM ${subquery(sql)} WHERE ${g} IS NOT NULL LIMIT 1`,
        );
        let geometryType = probe.rows[0]?.type;
        let srid = probe.rows[0]?.srid ?? 0;
        if (!geometryType) {
          // No feature: what the column's type modifier says, if anything.
          const typmod = await query<{ type: string; srid: number }>(
            'SELECT postgis_typmod_type($1) AS type, postgis_typmod_srid($1) AS srid',
            [geometry.dataTypeModifier],
          );
          geometryType = geometryTypeName(typmod.rows[0]?.type ?? 'Geometry');
          srid = typmod.rows[0]?.srid ?? 0;
        }
        const columns = fields
          .filter((f) => !isGeometry(f))
          .map((f) => ({ name: f.name, type: jsonType(typeOf.get(f.dataTypeID)) }));
        return {
          valid: true,
          discovered: {
            columns,
            geometry_column: geometry.name,
            geometry_type: geometryType,
            srid: srid || DEFAULT_SRID,
            suggested_id_column: await suggestIdColumn(query, fields, typeOf),
          },
        };
      },
      connecting,
    );
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      return {
        valid: false,
        error: `The query did not finish within its ${DESCRIBE_BUDGET_MS} ms budget and was stopped.`,
        overran: true,
      };
    }
    if (isDatabaseError(error)) return { valid: false, error: error.message };
    throw error;
  }
}

/**
 * An integer or uuid column named id, fid, gid, ogc_fid, objectid or feature_id (in that order),
 * else the first column taken straight from a single-column primary key or unique constraint,
 * else "".
 */
async function suggestIdColumn(
  query: ReadOnlyQuery,
  fields: pg.FieldDef[],
  typeOf: Map<number, TypeRow>,
): Promise<string> {
  const idLike = (f: pg.FieldDef) => {
    const type = typeOf.get(f.dataTypeID);
    return jsonType(type) === 'integer' || type?.name === 'uuid';
  };
  for (const name of ID_NAMES) {
    const field = fields.find((f) => f.name.toLowerCase() === name && idLike(f));
    if (field) return field.name;
  }
  const tables = [...new Set(fields.filter((f) => f.tableID > 0).map((f) => f.tableID))];
  if (tables.length === 0) return '';
  const unique = await query<{ table: number; column: number }>(
    `SELECT conrelid::int AS "table", conkey[1]::int AS "column" FROM pg_catalog.pg_constraint
     WHERE contype IN ('p', 'u') AND cardinality(conkey) = 1 AND conrelid = ANY($1::oid[])`,
    [tables],
  );
  const keys = new Set(unique.rows.map((r) => `${r.table}:${r.column}`));
  return fields.find((f) => keys.has(`${f.tableID}:${f.columnID}`))?.name ?? '';
}

/**
 * True when `idColumn` is non-null and unique over every row of the SQL view, checked read-only
 * within {@link ID_CHECK_BUDGET_MS}. A refused query, a missing column or a database error is
 * false; a spent budget throws RuleViolationError('query_budget_exceeded'); outages throw
 * UnavailableError.
 */
export async function checkIdColumn(c: PostgisConnection, sql: string, idColumn: string): Promise<boolean> {
  const guard = await checkSql(sql, c.schemas);
  if (!guard.ok) return false;
  const id = `q.${escapeIdentifier(idColumn)}`;
  try {
    return await readOnly(c, ID_CHECK_BUDGET_MS, async (query) => {
      if (await hiddenCallRefusal(query, guard)) return false;
      const { rows } = await query<{ ok: boolean }>(
        `SELECT count(*) = count(${id}) AND count(*) = count(DISTINCT ${id}) AS ok FROM ${subquery(sql)}`,
      );
      return rows[0]?.ok === true;
    });
  } catch (error) {
    if (error instanceof BudgetExceededError) throw overrun('the id_column check', ID_CHECK_BUDGET_MS);
    if (isDatabaseError(error)) return false;
    throw error;
  }
}

/** A query of a SQL view that ran past its budget (and was stopped): its own 422, not a verdict. */
function overrun(what: string, budgetMs: number): RuleViolationError {
  return new RuleViolationError(
    'query_budget_exceeded',
    `The SQL view is too slow: ${what} did not finish within its ${budgetMs} ms budget and was stopped.`,
  );
}
