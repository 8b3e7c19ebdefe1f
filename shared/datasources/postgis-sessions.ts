/**
 * The read-only units of work on a PostGIS connection (ADRs 0032, 0033, 0108): every database
 * round trip runs in a `BEGIN READ ONLY` transaction with a transaction-local statement_timeout,
 * lock_timeout, search_path, no JIT and UTC (opened in one round trip), and under a client-side
 * deadline as well (a server that ignores statement_timeout — PGlite — still can't hold a request).
 * A unit of work retries an outage within its budget; a statement's failure becomes an outage, a
 * spent budget or the database's own error. Identifiers are quoted with `escapeIdentifier`; values
 * travel as parameters, except the opening's own settings (quoted with `escapeLiteral`).
 */
import type pg from 'pg';
import { UnavailableError } from '#domain/errors.ts';
import { inSubsegment } from '#telemetry/tracer.ts';
import { escapeIdentifier, escapeLiteral, isDatabaseError, isPostgresOutage } from './pg-driver.ts';
import { type Checkout, CONNECT_TIMEOUT_MS, checkout, type PostgisConnection } from './postgis.ts';

/** Waiting for a lock is never worth more than this. */
export const LOCK_TIMEOUT_MS = 2_000;

/** A statement ran out of its budget (server statement_timeout or the client-side deadline). */
export class BudgetExceededError extends Error {}

/** Runs one statement inside the read-only transaction. */
export type ReadOnlyQuery = <R extends pg.QueryResultRow = Record<string, unknown>>(
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>;

/** True when the error says the data source can't be reached (ADR 0034). */
const isOutage = (error: unknown): boolean =>
  isPostgresOutage(
    error,
    /timeout exceeded when trying to connect|connection timeout|Connection terminated/i,
  );

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
 * statement_timeout (the budget), lock_timeout, search_path (the service's schemas, public and
 * the schema PostGIS lives in), no JIT and UTC, all set in the round trip that begins it. Each statement also has a client-side deadline at the end of the
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

/** The X-Ray subsegment of a PostGIS unit of work (`readOnly`, ADR 0092). */
export const POSTGIS_READ_ONLY = 'postgis read-only';

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

/**
 * What opens a unit of work, sent as one simple-protocol query (no parameters, so its values are
 * quoted literals): `BEGIN READ ONLY`, then the transaction-local settings — statement_timeout
 * (the budget), lock_timeout, search_path (the service's schemas, public and PostGIS' schema), no
 * JIT (PostGIS declares its functions costly, so the planner would compile a statement of a few
 * milliseconds for seconds), UTC for dates — and what the unit learns: PostGIS' version and the
 * role. Two round trips before (BEGIN, then the settings), three with a read's own settings.
 */
function opening(c: PostgisConnection, budgetMs: number): string {
  const schemas = (c.schemas?.length ? c.schemas : ['public']).map((s) => escapeIdentifier(s));
  if (!schemas.includes('"public"')) schemas.push('"public"');
  const budget = `${Math.round(budgetMs)}ms`;
  const lock = `${Math.round(Math.min(LOCK_TIMEOUT_MS, budgetMs))}ms`;
  return `BEGIN READ ONLY;
    SELECT set_config('statement_timeout', ${escapeLiteral(budget)}, true),
           set_config('lock_timeout', ${escapeLiteral(lock)}, true),
           set_config('search_path', ${escapeLiteral(schemas.join(', '))} || coalesce((SELECT ', ' || quote_ident(n.nspname)
             FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
             WHERE e.extname = 'postgis'), ''), true),
           set_config('jit', 'off', true), set_config('TimeZone', 'UTC', true),
           (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'postgis') AS postgis,
           current_user AS "user"`;
}

/**
 * The connection opened ahead of this work, or a new one when it broke while it waited (the server
 * ended its backend: a restart, an administrator); a new one when none was opened ahead.
 */
async function usable(
  c: PostgisConnection,
  deadline: number,
  connecting?: Promise<Checkout>,
): Promise<Checkout> {
  if (!connecting) return checkout(c, deadline);
  const ahead = await connecting;
  if (!ahead.error()) return ahead;
  ahead.end();
  return checkout(c, deadline);
}

async function readOnlyOnce<T>(
  c: PostgisConnection,
  deadline: number,
  budgetMs: number,
  work: (query: ReadOnlyQuery, session: SessionInfo) => Promise<T>,
  connecting?: Promise<Checkout>,
): Promise<T> {
  // A connection that dies while checked out (a restarted backend) is kept by the checkout as its
  // error (`lost`), never an uncaught one; `broken` is what the work's own statements ran into.
  const { client, error: lost, end } = await usable(c, deadline, connecting);
  let broken: Error | undefined;
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
    // One round trip opens the unit: BEGIN and the settings in one simple-protocol query.
    const opened: pg.QueryResult | pg.QueryResult[] = await query(opening(c, budgetMs));
    const setup = Array.isArray(opened) ? (opened[opened.length - 1] as pg.QueryResult) : opened;
    const session = setup.rows[0] as SessionInfo;
    const result = await work(query, session);
    await query('ROLLBACK');
    return result;
  } catch (error) {
    if (!broken && !lost()) {
      try {
        await client.query({ text: 'ROLLBACK', query_timeout: CONNECT_TIMEOUT_MS } as pg.QueryConfig);
      } catch (rollback) {
        broken = rollback as Error;
      }
    }
    throw statementFailure(c, error);
  } finally {
    end(broken);
  }
}

/**
 * Runs one statement in a savepoint: a database error (other than a timeout) rolls back to it and
 * is returned, so the transaction goes on.
 */
export async function attempt<R extends pg.QueryResultRow>(
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
