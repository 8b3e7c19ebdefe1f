import { createHash } from 'node:crypto';
import type pg from 'pg';

/*
 * The PostgreSQL driver, loaded on first use (ADR 0100): `pg` is a sidecar beside the bundles of
 * the PostGIS routes (`pg.sidecar.mjs`, `infra/bundling.ts`), the package when run from source.
 * Its two helpers every query builder needs are here without loading it.
 */

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

let driver: typeof pg | undefined;
let loading: Promise<typeof pg> | undefined;

/**
 * Runs `load` (the import of pg) with a `navigator` like the one Node defines from version 21 on.
 * At import pg asks whether it runs in a Cloudflare Worker: by `navigator.userAgent` when there is
 * one; without it (Node 20, the Lambda runtime) by constructing a fetch `Response`, which loads
 * undici: 15–19 ms of every cold start that reaches PostGIS, for an answer that is always no here.
 * The navigator is there for the import only; one defined already is left alone.
 */
async function asNode21<T>(load: () => Promise<T>): Promise<T> {
  if ('navigator' in globalThis) return load();
  const navigator = { userAgent: `Node.js/${process.versions.node.split('.')[0]}` };
  Object.defineProperty(globalThis, 'navigator', { value: navigator, configurable: true });
  try {
    return await load();
  } finally {
    Reflect.deleteProperty(globalThis, 'navigator');
  }
}

/** The `pg` module (Pool, Client), loaded once. */
export function loadPg(): Promise<typeof pg> {
  loading ??= asNode21(
    () =>
      (typeof GEOPLANE_BUNDLE !== 'undefined'
        ? import(new URL('./pg.sidecar.mjs', import.meta.url).href)
        : import('pg')) as Promise<{ default: typeof pg }>,
  ).then(
    (module) => {
      driver = module.default;
      return module.default;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** How long a pooled connection waits idle before it closes. */
const POOL_IDLE_MS = 10_000;

/**
 * A connection identity as a key: the address, database, login and sslmode, the password as its
 * hash, and what else tells the caller's connections apart (`extra`).
 */
export function connectionIdentity(
  c: { host: string; port: number; database: string; user: string; password?: string; sslmode?: string },
  ...extra: unknown[]
): string {
  const secret = createHash('sha256')
    .update(c.password ?? '')
    .digest('base64url');
  return JSON.stringify([c.host, c.port, c.database, c.user, secret, c.sslmode ?? 'prefer', ...extra]);
}

/**
 * The pool of `key` in `pools` (kept least recently used first), made from `config` when there is
 * none: idle connections close after {@link POOL_IDLE_MS} and let the process exit (Lambdas,
 * tests), an idle connection the server dropped is discarded (the next checkout connects anew),
 * and beyond `maxPools` the least recently used pool is closed.
 */
export function keptPool(
  pools: Map<string, pg.Pool>,
  key: string,
  maxPools: number,
  driver: typeof pg,
  config: pg.PoolConfig,
): pg.Pool {
  const found = pools.get(key);
  if (found) {
    pools.delete(key);
    pools.set(key, found);
    return found;
  }
  const pool = new driver.Pool({ ...config, idleTimeoutMillis: POOL_IDLE_MS, allowExitOnIdle: true });
  pool.on('error', () => {});
  pools.set(key, pool);
  if (pools.size > maxPools) {
    const [oldest, old] = pools.entries().next().value as [string, pg.Pool];
    pools.delete(oldest);
    void old.end().catch(() => {});
  }
  return pool;
}

/** A quoted identifier: pg's own `escapeIdentifier` (double quotes, inner ones doubled). */
export function escapeIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A quoted literal, as pg's own `escapeLiteral` writes it (single quotes doubled; with a backslash,
 * backslashes doubled and an `E` prefix): for the few values sent in a statement without
 * parameters, where one round trip carries several statements.
 */
export function escapeLiteral(value: string): string {
  const quoted = value.replace(/'/g, "''");
  return value.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/** True for an error the server answered (pg's `DatabaseError`); never before pg was loaded (no query ran). */
export function isDatabaseError(error: unknown): error is pg.DatabaseError {
  return driver !== undefined && error instanceof driver.DatabaseError;
}

const OUTAGE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * True when an error of the driver says the server can't be reached or dropped the connection
 * (ADR 0034): a socket errno, SQLSTATE class 08 (connection_exception), an admin or crash shutdown,
 * cannot_connect_now, too_many_connections, any of an AggregateError's errors (a connect tried on
 * several addresses), or the driver's own words for it, which differ by caller (`messages`).
 */
export function isPostgresOutage(error: unknown, messages: RegExp): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (OUTAGE_ERRNOS.has(code)) return true;
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
  }
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested) && nested.some((e) => isPostgresOutage(e, messages))) return true;
  return messages.test(error.message);
}
