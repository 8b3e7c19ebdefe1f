import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { readOnly } from '#datasources/postgis-sessions.ts';
import {
  checkIdColumn,
  DESCRIBE_BUDGET_MS,
  describeSql,
  ID_CHECK_BUDGET_MS,
} from '#datasources/postgis-sql-views.ts';
import { RuleViolationError } from '#domain/errors.ts';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '#infra/local/postgis.ts';

// statement_timeout on the embedded PostGIS (ADR 0031, 0033, 0108): PGlite ignores it on its own.
let dataDir: string;
let pgis: EmbeddedPostgis;
let demo: PostgisConnection;
const progress: string[] = [];
/** When each line of `progress` was logged (epoch ms). */
const progressAt: number[] = [];

/** CPU-bound, allowed by the SQL guard, never reads the clock: an interrupt stops it. */
const RUNAWAY_SQL =
  'SELECT n.i AS id, ST_MakePoint(0, 0) AS geom FROM (SELECT count(*) AS i FROM generate_series(1, 1e11)) n';
/**
 * A loop in PostGIS's C code that checks for no interrupt: k-means seeds 40 000 clusters among
 * 40 000 points (over a billion distances, seconds) before its first interrupt check. Its cancel
 * is delivered and ignored: only a restart stops it.
 */
const DEAF_SQL =
  'SELECT max(c) FROM (SELECT ST_ClusterKMeans(geom, 40000) OVER () AS c FROM (SELECT ST_MakePoint(i % 317, i % 331) AS geom FROM generate_series(1, 40000) i) p) s';
/** PROJ's error path for an init file leaves the backend without answering at all (ADR 0108). */
const PROJ_WEDGE_SQL =
  "SELECT ST_AsText(ST_Transform(ST_SetSRID(ST_MakePoint(0, 0), 4326), '+init=epsg:4326'))";
/** Its statement_timeout: after the rows are read, well before the seeding ends. */
const DEAF_TIMEOUT = '1000';

async function start(): Promise<void> {
  pgis = await startEmbeddedPostgis({
    dataDir,
    port: 0,
    onProgress: (m) => {
      progress.push(m);
      progressAt.push(Date.now());
    },
  });
  demo = {
    host: pgis.host,
    port: pgis.port,
    database: pgis.database,
    user: pgis.user,
    password: pgis.password,
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'geoplane-deadlines-'));
  await start();
}, 180_000);

afterAll(async () => {
  await pgis?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Waits until the supervisor's restart after `before` restarts is done (seconds; more under load). */
async function restartDone(before: number): Promise<void> {
  await vi
    .waitUntil(() => pgis.stoppedStatements().restarts > before, { timeout: 90_000, interval: 50 })
    .catch(() => {
      throw new Error(`no restart within 90 s:\n${progress.join('\n')}`);
    });
}

/** Waits until the supervisor logs that it begins a restart (after `seen` such lines). */
async function restartBegun(seen: number): Promise<void> {
  await vi
    .waitUntil(() => restartLines() > seen, { timeout: 10_000, interval: 10 })
    .catch(() => {
      throw new Error(`no restart begun within 10 s:\n${progress.join('\n')}`);
    });
}

function restartLines(): number {
  return progress.filter((m) => /: restarting PostGIS$/.test(m)).length;
}

function admin(options: { connectionTimeoutMillis?: number } = {}): pg.Client {
  const client = new pg.Client({
    host: pgis.host,
    port: pgis.port,
    database: pgis.database,
    user: pgis.admin.user,
    password: pgis.admin.password,
    ...options,
  });
  client.on('error', () => {});
  return client;
}

/** An admin client, connecting again while the door answers "starting up" (57P03). */
async function adminWhileStartingUp(): Promise<pg.Client> {
  for (;;) {
    const client = admin({ connectionTimeoutMillis: 2_000 });
    const error = await client.connect().then(
      () => undefined,
      (e: { code?: string }) => e,
    );
    if (!error) return client;
    if (error.code !== '57P03') throw error;
  }
}

/** The superuser as a service connection (readOnly), e.g. through a front of a test's own. */
function adminConnection(port = pgis.port): PostgisConnection {
  return {
    host: pgis.host,
    port,
    database: pgis.database,
    user: pgis.admin.user,
    password: pgis.admin.password,
    // No TLS probe: each connection a test's front counts is a login.
    sslmode: 'disable',
  };
}

/** Reads the demo table through readOnly with `budgetMs`: 300 rows when served. */
function placesWithin(budgetMs: number, c: PostgisConnection = demo): Promise<number> {
  return readOnly(c, budgetMs, async (query) => {
    const { rows } = await query<{ n: number }>('SELECT count(*)::int AS n FROM public.places');
    return rows[0]?.n ?? -1;
  });
}

/**
 * A TCP front of the embedded PostGIS for client-side tests: `decide` says, per connection (1,
 * 2, …), whether it is refused as PostgreSQL does while starting up (after its startup packet:
 * FATAL 57P03), relayed, or relayed and cut after some milliseconds.
 */
async function front(
  decide: (n: number) => 'starting-up' | 'relay' | { cutAfterMs: number },
): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((client) => {
    const verdict = decide(++count);
    sockets.add(client);
    client.on('error', () => {});
    if (verdict === 'starting-up') {
      client.on('data', (chunk) => {
        // SSLRequest: 'N'; anything else is the startup packet: refuse it as PostgreSQL does.
        if (chunk.length === 8 && chunk.readInt32BE(4) === 80877103) return void client.write('N');
        client.end(fatalMessage('57P03', 'the database system is starting up'));
      });
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: pgis.port });
    sockets.add(upstream);
    upstream.on('error', () => {});
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    if (verdict !== 'relay') setTimeout(() => client.destroy(), verdict.cutAfterMs).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function fatalMessage(code: string, message: string): Buffer {
  const body = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
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

  it('stops a CPU-bound statement in place at its deadline with 57014 by interrupting the worker, and keeps the connection', async () => {
    const before = pgis.stoppedStatements();
    const runaway = admin();
    await runaway.connect();
    try {
      await runaway.query('BEGIN');
      await runaway.query(`SELECT set_config('statement_timeout', '500', true)`);
      // It never reads the clock (no tuplestore to spill): only the parent's interrupt can deliver its deadline.
      const run = await timed(() =>
        runaway.query('SELECT count(*) FROM (SELECT generate_series(1, 100000000000)) s'),
      );
      expect(run.error).toMatchObject({
        code: '57014',
        message: 'canceling statement due to statement timeout',
      });
      expect(run.ms).toBeGreaterThanOrEqual(450);
      expect(run.ms).toBeLessThan(2_000);
      await runaway.query('ROLLBACK');
      // The same connection goes on and the backend is sound: nothing was restarted.
      expect((await runaway.query('SELECT count(*)::int AS n FROM public.places')).rows[0].n).toBe(300);
    } finally {
      await runaway.end();
    }
    const after = pgis.stoppedStatements();
    expect(after.interrupted).toBeGreaterThan(before.interrupted);
    expect(after.restarts).toBe(before.restarts);
  });

  it("lets a statement run to its own statement_timeout when another of PostgreSQL's timers falls due first", async () => {
    const before = pgis.stoppedStatements();
    const long = admin();
    await long.connect();
    try {
      await long.query('BEGIN');
      // A table read leaves statistics to flush: PostgreSQL arms its idle-flush timer (up to 10 s),
      // the same alarm as statement_timeout's. Its firing must stop nothing.
      await long.query('SELECT count(*) FROM public.places');
      await long.query(`SELECT set_config('statement_timeout', '13000', true)`);
      const run = await timed(() =>
        long.query('SELECT count(*) FROM (SELECT generate_series(1, 100000000000)) s'),
      );
      expect(run.error).toMatchObject({ code: '57014' });
      expect(run.ms).toBeGreaterThanOrEqual(12_500);
      await long.query('ROLLBACK');
    } finally {
      await long.end();
    }
    expect(pgis.stoppedStatements().restarts).toBe(before.restarts);
  }, 30_000);

  it.each([
    ['a count of 300 million', 'SELECT count(*) FROM generate_series(1, 300000000)'],
    [
      'a recursive CTE without end',
      'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    ],
    ['a cross join', 'SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b'],
  ])(
    'stops %s of the demo role at its budget, and another connection is served right after',
    async (_, sql) => {
      const before = pgis.stoppedStatements();
      const run = await timed(() => readOnly(demo, 1_000, (query) => query(sql)));
      expect(run.error?.message).toMatch(/canceling statement due to statement timeout/);
      expect(run.ms).toBeLessThan(2_500);
      const next = await timed(() => placesWithin(2_000));
      expect(next.value).toBe(300);
      expect(next.ms).toBeLessThan(1_000);
      expect(pgis.stoppedStatements().restarts).toBe(before.restarts);
    },
  );

  it('answers a SQL view over its describe budget as an overrun, and the next query at once', async () => {
    const before = pgis.stoppedStatements().restarts;
    const started = Date.now();
    const slow = await describeSql(demo, RUNAWAY_SQL);
    expect(slow).toEqual({
      valid: false,
      error: `The query did not finish within its ${DESCRIBE_BUDGET_MS} ms budget and was stopped.`,
      overran: true,
    });
    expect(Date.now() - started).toBeLessThan(DESCRIBE_BUDGET_MS + 1_500);
    // Cancelled in place: no restart to wait for.
    const next = await timed(() => describeSql(demo, 'SELECT id, geom FROM public.roads'));
    expect(next.value).toMatchObject({ valid: true });
    expect(next.ms).toBeLessThan(1_000);
    expect(pgis.stoppedStatements().restarts).toBe(before);
  }, 45_000);

  it('answers an id check over its budget as query_budget_exceeded, not as "not unique"', async () => {
    const before = pgis.stoppedStatements().restarts;
    const error = await checkIdColumn(demo, RUNAWAY_SQL, 'id').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuleViolationError);
    expect(error).toMatchObject({ reason: 'query_budget_exceeded' });
    expect((error as Error).message).toContain(`${ID_CHECK_BUDGET_MS} ms`);
    expect(pgis.stoppedStatements().restarts).toBe(before);
  }, 45_000);

  it('restarts a backend whose statement lost its answer in native code (a PROJ init file), tells that client, and serves the next request', async () => {
    const before = pgis.stoppedStatements().restarts;
    const culprit = admin();
    await culprit.connect();
    await culprit.query('BEGIN');
    // Far from its deadline: PROJ's error path leaves the backend without answering at all.
    await culprit.query(`SELECT set_config('statement_timeout', '30000', true)`);
    const run = await timed(() =>
      culprit.query({
        text: PROJ_WEDGE_SQL,
        query_timeout: 20_000,
      } as pg.QueryConfig),
    );
    await culprit.end().catch(() => {});
    // Its client hears why at once (XX000, not an outage it would retry into the same wedge).
    expect(run.error).toMatchObject({
      code: 'XX000',
      message: expect.stringMatching(/could not finish this statement and restarts/),
    });
    expect(run.ms).toBeLessThan(15_000);
    // Everyone else waits at the door for the restart, and is served once a probe query answered.
    const next = await timed(() => placesWithin(90_000));
    expect(next.value).toBe(300);
    await restartDone(before);
    expect(progress.some((m) => /the backend is wedged \(the answer to a 'Q' message was lost/.test(m))).toBe(
      true,
    );
    expect(progress.some((m) => /PostGIS restarted in \d+ ms \(a probe query answered\)/.test(m))).toBe(true);
    // The new backend is sound: a second client's transaction runs normally.
    expect(await placesWithin(2_000)).toBe(300);
  }, 120_000);

  it('keeps its deadlines after a restart when the alarm PostgreSQL armed while opening the data dir falls due inside a statement', async () => {
    const before = pgis.stoppedStatements().restarts;
    const culprit = admin();
    await culprit.connect();
    await culprit.query(PROJ_WEDGE_SQL).catch(() => {});
    await culprit.end().catch(() => {});
    await restartDone(before);
    // PostgreSQL reports its startup progress every log_startup_progress_interval (10 s) from the
    // data dir's opening, before the restart was done: that alarm falls due during a sleep no
    // deadline bounds (nothing arms an earlier one before it), as a long statement right after a
    // restart would.
    const restarted = progressAt[
      progress.findLastIndex((m) => m.startsWith('PostGIS restarted in'))
    ] as number;
    const client = admin();
    await client.connect();
    try {
      await client.query('SELECT pg_sleep($1)', [Math.max(0.5, (restarted + 10_500 - Date.now()) / 1000)]);
      await client.query('BEGIN');
      await client.query(`SELECT set_config('statement_timeout', '400', true)`);
      const run = await timed(() => client.query('SELECT pg_sleep(8)'));
      expect(run.error).toMatchObject({ code: '57014' });
      expect(run.ms).toBeLessThan(2_000);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    expect(pgis.stoppedStatements().restarts).toBe(before + 1);
  }, 60_000);

  it('waits for a server that answers 57P03 (starting up) until its budget, past the 5 s outage window', async () => {
    const startsAt = Date.now() + 6_000;
    const fake = await front(() => (Date.now() < startsAt ? 'starting-up' : 'relay'));
    try {
      const run = await timed(() => placesWithin(10_000, adminConnection(fake.port)));
      expect(run.value).toBe(300);
      expect(run.ms).toBeGreaterThanOrEqual(5_500);
      expect(fake.connections()).toBeGreaterThan(2);
    } finally {
      await fake.close();
    }
  }, 30_000);

  it('runs a unit again when its connection is dropped after a long wait (a restart under a statement ahead of it)', async () => {
    const fake = await front((n) => (n === 1 ? { cutAfterMs: 2_500 } : 'relay'));
    let attempts = 0;
    try {
      const run = await timed(() =>
        readOnly(adminConnection(fake.port), 10_000, async (query) => {
          attempts += 1;
          // The first attempt waits long enough for its connection to be cut under it.
          if (attempts === 1) await query('SELECT pg_sleep(4)');
          return (await query<{ n: number }>('SELECT count(*)::int AS n FROM public.places')).rows[0]?.n;
        }),
      );
      expect(run.error).toBeUndefined();
      expect(run.value).toBe(300);
      expect(attempts).toBe(2);
    } finally {
      await fake.close();
    }
  }, 30_000);
});

describe('restarts, where a statement ignores its cancel', () => {
  it('takes over a warm standby, so a unit of work arriving as the runaway is stopped is served within its own budget, not refused', async () => {
    // After the first start (and 1 s after each restart) a standby loads PGlite and PostGIS (ADR 0142).
    await vi
      .waitUntil(() => pgis.standbyWarm(), { timeout: 120_000, interval: 50 })
      .catch(() => {
        throw new Error(`no warm standby within 120 s:\n${progress.join('\n')}`);
      });
    // It did ahead what needs no data dir: PostGIS linked, PostgreSQL's shared memory touched.
    expect(progress.filter((m) => m.startsWith('a warm standby waits')).at(-1)).toMatch(
      /^a warm standby waits for the next restart \(loaded in \d+ ms; PostGIS linked, 48 MB of memory touched\)$/,
    );
    const takeovers = () => progress.filter((m) => m === 'opening the data dir in the warm standby').length;
    const before = { restarts: pgis.stoppedStatements().restarts, takeovers: takeovers() };
    const runaway = admin();
    await runaway.connect();
    await runaway.query('BEGIN');
    await runaway.query(`SELECT set_config('statement_timeout', '${DEAF_TIMEOUT}', true)`);
    const stopped = await timed(() => runaway.query(DEAF_SQL));
    await runaway.end().catch(() => {});
    expect(stopped.error).toBeDefined();
    // Once, with the budget a SQL view's validation has: it waits at the door for the restart.
    const next = await timed(() => placesWithin(DESCRIBE_BUDGET_MS));
    expect(next.error).toBeUndefined();
    expect(next.value).toBe(300);
    await restartDone(before.restarts);
    expect(takeovers()).toBe(before.takeovers + 1);
    expect(progress.some((m) => /the warm standby did not start/.test(m))).toBe(false);
  }, 180_000);

  it('restarts the worker, holds connections that arrive meanwhile instead of refusing them, and serves them once a probe query answered', async () => {
    const before = pgis.stoppedStatements();
    const seen = restartLines();
    const runaway = admin();
    await runaway.connect();
    await runaway.query('BEGIN');
    await runaway.query(`SELECT set_config('statement_timeout', '${DEAF_TIMEOUT}', true)`);
    const run = timed(() => runaway.query(DEAF_SQL));
    await restartBegun(seen);
    // A client arriving now is held at the door: it logs in once the worker is back, or hears
    // "starting up" (57P03) in time for its retry. The port is never closed (ECONNREFUSED).
    const during = admin();
    const held = await timed(() => during.connect());
    if (held.error) {
      expect(held.error).toMatchObject({ code: '57P03', message: 'the database system is starting up' });
      expect(held.ms).toBeLessThan(2_000);
    }
    await during.end().catch(() => {});
    // A unit of work arriving now waits for the restart within its budget, and is served.
    const waited = await timed(() => placesWithin(90_000));
    expect(waited.error).toBeUndefined();
    expect(waited.value).toBe(300);
    // The runaway itself was stopped by the restart, not after minutes.
    const stopped = await run;
    expect(stopped.error).toBeDefined();
    expect(stopped.ms).toBeLessThan(3_000);
    await runaway.end().catch(() => {});
    // Interrupted at its deadline, it went on: restarted after the grace.
    expect(pgis.stoppedStatements()).toMatchObject({
      restarts: before.restarts + 1,
      interrupted: before.interrupted + 1,
    });
    expect(progress.some((m) => /ms after its statement_timeout cancel: restarting PostGIS$/.test(m))).toBe(
      true,
    );
    expect(progress.some((m) => /PostGIS restarted in \d+ ms \(a probe query answered\)/.test(m))).toBe(true);
  }, 120_000);

  it('restarts again for a second runaway that waited at the door during the first restart', async () => {
    const before = pgis.stoppedStatements().restarts;
    const seen = restartLines();
    const first = admin();
    await first.connect();
    await first.query('BEGIN');
    await first.query(`SELECT set_config('statement_timeout', '${DEAF_TIMEOUT}', true)`);
    const firstRun = first.query(DEAF_SQL).catch((e: unknown) => e);
    await restartBegun(seen);
    // The second arrives during the restart (retrying "starting up"), and runs away on the new worker.
    const second = await adminWhileStartingUp();
    await second.query('BEGIN');
    await second.query(`SELECT set_config('statement_timeout', '${DEAF_TIMEOUT}', true)`);
    const secondRun = await timed(() => second.query(DEAF_SQL));
    expect(secondRun.error).toBeDefined();
    expect(secondRun.ms).toBeLessThan(3_000);
    await firstRun;
    await first.end().catch(() => {});
    await second.end().catch(() => {});
    // Both were stopped, each by a verified restart, and the next unit of work is served.
    expect(await placesWithin(90_000)).toBe(300);
    await restartDone(before + 1);
    expect(pgis.stoppedStatements().restarts).toBe(before + 2);
    // On Linux the thread's CPU since the cancel decides, before the wall-clock grace (ADR 0142):
    // of this file's runaways, at least one got the CPU share that needs, even on a busy machine.
    if (existsSync('/proc/thread-self')) {
      expect(
        progress.some((m) => /used \d+ ms of CPU in \d+ ms after its statement_timeout cancel/.test(m)),
      ).toBe(true);
    }
  }, 180_000);
});
