/**
 * PostGIS data sources through `pg`: the same code against the embedded PostGIS locally and
 * RDS/Aurora in AWS (DESIGN §2, §8; ADRs 0032–0034). This module holds the connections: a small
 * pool per connection identity, pinned to the address the network policy checked, with our own
 * wait for a free connection, libpq's `sslmode=prefer`, connect failures told apart as ADR 0074
 * allows, and the one-off connection test. The read-only units of work on them are in
 * `postgis-sessions.ts`, layer discovery and probing in `postgis-discovery.ts`, SQL views in
 * `postgis-sql-views.ts`.
 */
import type pg from 'pg';
import type { PostgisConnectionInfo } from '#domain/datasource.ts';
import { DomainError, RuleViolationError, UnavailableError } from '#domain/errors.ts';
import { CONNECTION_TARGET_NOT_ALLOWED } from '#domain/services.ts';
import { inSubsegment } from '#telemetry/tracer.ts';
import { connectionTargets } from './network-policy.ts';
import { connectionIdentity, keptPool, loadPg } from './pg-driver.ts';

/** How to reach a PostGIS database: a service's connection info plus its decrypted password. */
export type PostgisConnection = PostgisConnectionInfo & { password?: string };

/** Connect timeout, also the wait for a free pooled connection (ADR 0033). */
export const CONNECT_TIMEOUT_MS = 2_000;
const MAX_POOLS = 16;

const pools = new Map<string, pg.Pool>();
/** Identities whose server refused TLS under sslmode=prefer: they talk plain from then on. */
const plainText = new Set<string>();

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
  return keptPool(pools, key, MAX_POOLS, driver, { ...clientConfig(c, key), max: POOL_SIZE });
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

/**
 * A pooled connection and its slot, checked out together and given back together by `end`. The
 * connection's errors are kept for the whole checkout (pg-pool stops listening on checkout: a
 * backend ended while the connection waits for its work, opened ahead of it, or while the work
 * runs would otherwise be an uncaught exception); `error` answers the first. `end` gives the
 * connection back, destroyed when it broke (its own error, or `broken` when its user saw one), and
 * the slot, and stops listening.
 */
export type Checkout = {
  client: pg.PoolClient;
  error: () => Error | undefined;
  end: (broken?: Error) => void;
};

/** The checkout of `client`, its errors kept until it ends. */
function checkedOut(client: pg.PoolClient, release: () => void): Checkout {
  let first: Error | undefined;
  const keep = (error: Error) => {
    first ??= error;
  };
  client.on('error', keep);
  return {
    client,
    error: () => first,
    end: (broken) => {
      client.off('error', keep);
      client.release(broken ?? first ?? false);
      release();
    },
  };
}

/** A pooled connection to the checked address (pools are per identity, the address included). */
export async function checkout(c: PostgisConnection, deadline: number): Promise<Checkout> {
  let release: (() => void) | undefined;
  try {
    const target = await pinned(c);
    const key = connectionIdentity(target);
    const driver = await loadPg();
    release = await acquireSlot(c, key, deadline);
    try {
      return checkedOut(await poolFor(driver, target, key).connect(), release);
    } catch (error) {
      if ((c.sslmode ?? 'prefer') !== 'prefer' || plainText.has(key) || !refusesTls(error)) throw error;
      // libpq's `prefer`: the server has no TLS, so talk plain.
      plainText.add(key);
      dropPool(key);
      return checkedOut(await poolFor(driver, target, key).connect(), release);
    }
  } catch (error) {
    release?.();
    throw connectFailure(c, error);
  }
}

/** Returns a connection opened ahead of a unit of work that will not run (a failed connect needs nothing). */
export function giveBack(connecting: Promise<Checkout>): void {
  connecting.then(
    (ahead) => ahead.end(),
    () => {},
  );
}

function refusesTls(error: unknown): boolean {
  return error instanceof Error && /does not support SSL/i.test(error.message);
}

/** Refusals that mean "we may not read", not "it is down": the login, the database, TLS setup. */
const REFUSAL_SQLSTATES = new Set(['28P01', '28000', '3D000', '42501']);

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

/** The X-Ray subsegment of a connection test (ADR 0092). */
export const POSTGIS_TEST_CONNECTION = 'postgis test-connection';

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
    client = await connect(target, connectionIdentity(target));
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
