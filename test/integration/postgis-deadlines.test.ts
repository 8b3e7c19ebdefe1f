import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '../../infra/local/postgis.ts';
import {
  checkIdColumn,
  DESCRIBE_BUDGET_MS,
  describeSql,
  ID_CHECK_BUDGET_MS,
  type PostgisConnection,
} from '../../shared/datasources/postgis.ts';
import { RuleViolationError } from '../../shared/domain/errors.ts';

// statement_timeout on the embedded PostGIS (ADR 0031, 0033): PGlite ignores it on its own.
let dataDir: string;
let pgis: EmbeddedPostgis;
let demo: PostgisConnection;
const progress: string[] = [];

/** CPU-bound, allowed by the SQL guard, never reads the clock: only a restart stops it. */
const RUNAWAY_SQL =
  'SELECT n.i AS id, ST_MakePoint(0, 0) AS geom FROM (SELECT count(*) AS i FROM generate_series(1, 1e11)) n';

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'geoplane-deadlines-'));
  pgis = await startEmbeddedPostgis({
    dataDir,
    port: 0,
    onProgress: (m) => {
      progress.push(m);
    },
  });
  demo = {
    host: pgis.host,
    port: pgis.port,
    database: pgis.database,
    user: pgis.user,
    password: pgis.password,
  };
}, 180_000);

afterAll(async () => {
  await pgis?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Waits until the watchdog's restart after `before` restarts is done. Until then the port is
 * closed (a request meanwhile is 503, ADR 0031); the restart takes ~3 s on a quiet machine and
 * twice that in a full run, so "the next request" is the one after it.
 */
async function restartDone(before: number): Promise<void> {
  await vi
    .waitUntil(() => pgis.stoppedStatements().restarts > before, { timeout: 30_000, interval: 50 })
    .catch(() => {
      throw new Error(`no restart within 30 s:\n${progress.join('\n')}`);
    });
}

function admin(): pg.Client {
  const client = new pg.Client({
    host: pgis.host,
    port: pgis.port,
    database: pgis.database,
    user: pgis.admin.user,
    password: pgis.admin.password,
  });
  client.on('error', () => {});
  return client;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value?: T; error?: Error }> {
  const started = Date.now();
  try {
    const value = await work();
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error: error as Error };
  }
}

describe('calls the parse tree can not see, resolved in the catalog', () => {
  beforeAll(async () => {
    const client = admin();
    await client.connect();
    try {
      await client.query(`
        CREATE OR REPLACE FUNCTION public.leak(p public.places) RETURNS text
          LANGUAGE sql AS $$ SELECT current_setting('server_version') $$;
        CREATE OR REPLACE FUNCTION public.evil_eq(a int, b text) RETURNS boolean
          LANGUAGE sql AS $$ SELECT true $$;
        DROP OPERATOR IF EXISTS public.=== (int, text);
        CREATE OPERATOR public.=== (LEFTARG = int, RIGHTARG = text, FUNCTION = public.evil_eq);
        GRANT EXECUTE ON FUNCTION public.leak(public.places) TO ${pg.escapeIdentifier(pgis.user)};`);
    } finally {
      await client.end();
    }
  });

  it('refuses t.f where f is a function of the row (attribute notation)', async () => {
    const result = await describeSql(demo, 'SELECT p.id, p.geom, p.leak FROM public.places p');
    expect(result).toMatchObject({
      valid: false,
      error: expect.stringMatching(/leak is not allowed: attribute notation/),
    });
  });

  it('refuses an operator a database user defined', async () => {
    const result = await describeSql(demo, "SELECT id, geom FROM public.places WHERE id === 'x'");
    expect(result).toMatchObject({
      valid: false,
      error: expect.stringMatching(/operator === \(schema public\) is not allowed/),
    });
  });

  it('accepts columns, composite fields and built-in or PostGIS operators', async () => {
    const result = await describeSql(
      demo,
      'SELECT p.id, p.name, (ST_Dump(p.geom)).geom AS geom FROM public.places p WHERE p.geom && ST_MakeEnvelope(-10, 40, 10, 55, 4326) AND p.id >= 1',
    );
    expect(result).toMatchObject({ valid: true });
  });
});

describe('statement_timeout on the embedded PostGIS', () => {
  it('stops a sleeping statement at its deadline with 57014 and keeps the backend', async () => {
    const before = pgis.stoppedStatements();
    const client = admin();
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT set_config('statement_timeout', '400', true)`);
      const run = await timed(() => client.query('SELECT pg_sleep(8)'));
      expect(run.error).toMatchObject({
        code: '57014',
        message: 'canceling statement due to statement timeout',
      });
      expect(run.ms).toBeGreaterThanOrEqual(350);
      expect(run.ms).toBeLessThan(2_000);
      await client.query('ROLLBACK');
      // The same connection goes on: nothing was restarted.
      expect((await client.query('SELECT count(*)::int AS n FROM public.places')).rows[0].n).toBe(300);
    } finally {
      await client.end();
    }
    const after = pgis.stoppedStatements();
    expect(after.cancelled).toBeGreaterThan(before.cancelled);
    expect(after.restarts).toBe(before.restarts);
  });

  it('leaves statements that finish in time alone, whatever their timeout', async () => {
    const client = admin();
    await client.connect();
    try {
      for (let i = 0; i < 20; i++) {
        await client.query('BEGIN');
        await client.query(`SELECT set_config('statement_timeout', '300', true)`);
        await client.query('SELECT pg_sleep(0.01)');
        await client.query('COMMIT');
      }
      // A deadline of an earlier statement must not cut a later one short.
      await client.query('BEGIN');
      await client.query(`SELECT set_config('statement_timeout', '3000', true)`);
      const run = await timed(() => client.query('SELECT pg_sleep(1)'));
      expect(run.error).toBeUndefined();
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  });

  it('restarts the backend under a CPU-bound statement that ignores its cancel, and serves the next request', async () => {
    const before = pgis.stoppedStatements();
    const runaway = admin();
    await runaway.connect();
    await runaway.query('BEGIN');
    await runaway.query(`SELECT set_config('statement_timeout', '500', true)`);
    const started = Date.now();
    const run = await timed(() => runaway.query('SELECT count(*) FROM generate_series(1, 1e11)'));
    await runaway.end().catch(() => {});
    // Stopped shortly after its deadline (grace 500 ms, watchdog every 200 ms), not after minutes.
    expect(run.error).toBeDefined();
    expect(Date.now() - started).toBeLessThan(3_000);
    // Once restarted, another client is served, and the data survived.
    await restartDone(before.restarts);
    const next = await timed(() =>
      describeSql(demo, 'SELECT id, name, geom FROM public.places WHERE id < 10'),
    );
    expect(next.value).toMatchObject({ valid: true });
    expect(next.ms).toBeLessThan(DESCRIBE_BUDGET_MS);
    const after = pgis.stoppedStatements();
    expect(after.restarts).toBe(before.restarts + 1);
    expect(progress.some((m) => /ignored the cancel: restarting PostGIS/.test(m))).toBe(true);
  }, 45_000);

  it('answers a SQL view over its describe budget as an overrun, and the next query within budget', async () => {
    const before = pgis.stoppedStatements().restarts;
    const started = Date.now();
    const slow = await describeSql(demo, RUNAWAY_SQL);
    expect(slow).toEqual({
      valid: false,
      error: `The query did not finish within its ${DESCRIBE_BUDGET_MS} ms budget and was stopped.`,
      overran: true,
    });
    expect(Date.now() - started).toBeLessThan(DESCRIBE_BUDGET_MS + 1_500);
    // The runaway ignored its cancel: served again once the watchdog's restart is done.
    await restartDone(before);
    const next = await timed(() => describeSql(demo, 'SELECT id, geom FROM public.roads'));
    expect(next.value).toMatchObject({ valid: true });
    expect(next.ms).toBeLessThan(DESCRIBE_BUDGET_MS);
  }, 45_000);

  it('answers an id check over its budget as query_budget_exceeded, not as "not unique"', async () => {
    const before = pgis.stoppedStatements().restarts;
    const error = await checkIdColumn(demo, RUNAWAY_SQL, 'id').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuleViolationError);
    expect(error).toMatchObject({ reason: 'query_budget_exceeded' });
    expect((error as Error).message).toContain(`${ID_CHECK_BUDGET_MS} ms`);
    await restartDone(before);
  }, 45_000);
});
