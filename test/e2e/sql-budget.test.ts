import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type ApiResponse, call, uniqueName } from '../support/client.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';
import { freePort } from '../support/ports.ts';

/**
 * One tenant can't hold the data source for others (issue #10 §1, ADR 0031/0033/0035): a host of
 * its own with the embedded PostGIS (a restart under a runaway statement must not disturb the
 * shared host's other tests), two workspaces with their own service on the same PostGIS.
 */
let host: HostProcess;
let connection: Record<string, unknown>;

function as(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return call(method, path, {
    baseUrl: host.url,
    dataDir: host.dataDir,
    headers: { 'X-API-Key': host.apiKey as string },
    ...(body === undefined ? {} : { body }),
  });
}

async function workspaceWithService(): Promise<string> {
  const ws = await as('POST', '/workspaces', { name: uniqueName() });
  expect(ws.status, ws.text).toBe(201);
  // After a test that made the embedded PostGIS restart, its connection test may need a moment.
  let svc = await as('POST', `/workspaces/${ws.body.id}/services`, {
    name: 'pg',
    type: 'postgis',
    connection,
  });
  for (let i = 0; i < 20 && svc.body.reason === 'connection_failed'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    svc = await as('POST', `/workspaces/${ws.body.id}/services`, { name: 'pg', type: 'postgis', connection });
  }
  expect(svc.status, svc.text).toBe(201);
  return `/workspaces/${ws.body.id}/services/${svc.body.id}`;
}

async function timed(work: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; ms: number }> {
  const started = Date.now();
  const res = await work();
  return { res, ms: Date.now() - started };
}

/** CPU-bound, allowed by the guard, never reads the clock: the supervisor's interrupt stops it (ADR 0108). */
const RUNAWAY =
  'SELECT n.i AS id, ST_MakePoint(0, 0) AS geom FROM (SELECT count(*) AS i FROM generate_series(1, 1e11)) n';

/**
 * Ignores its cancel: k-means++ seeding (native code, no interrupt check) of 60 000 clusters runs
 * far past validate-sql's 5 s budget, so only a restart of the PostGIS worker stops it (ADR 0108).
 */
const DEAF =
  'SELECT s.c AS id, s.geom FROM (SELECT ST_ClusterKMeans(p.geom, 60000) OVER () AS c, p.geom FROM (SELECT ST_MakePoint(i % 317, i % 331) AS geom FROM generate_series(1, 60000) i) p) s';

beforeAll(async () => {
  host = await startHostProcess({
    GEOPLANE_DYNAMODB_ENDPOINT: inject('host').dynamoEndpoint,
    GEOPLANE_TABLE_NAME: `budget-${Date.now().toString(36)}`,
    GEOPLANE_POSTGIS: 'on',
    GEOPLANE_POSTGIS_PORT: String(await freePort()),
  });
  connection = JSON.parse(readFileSync(join(host.dataDir, 'bootstrap.json'), 'utf8')).postgis;
}, 180_000);

afterAll(async () => {
  await host?.stop();
  host?.cleanup();
});

describe('SQL views on a shared data source', () => {
  it('refuses attribute-notation calls before anything runs', async () => {
    const a = await workspaceWithService();
    // Untimed: the host's first validation loads the SQL parser and opens its first connections,
    // which on a loaded CI machine took 4.3 s; what is timed below is the refusal itself.
    const warm = await as('POST', `${a}/validate-sql`, { sql: 'SELECT id, geom FROM places' });
    expect(warm.body).toMatchObject({ valid: true });
    for (const sql of [
      'SELECT id, geom, (3::float8).pg_sleep AS s FROM places',
      "SELECT id, geom, ('server_version'::text).current_setting AS v FROM places",
      'SELECT id, geom, (4242::bigint).pg_advisory_lock AS l FROM places',
      'SELECT p.id, p.geom, p.pg_sleep FROM places p',
    ]) {
      const { res, ms } = await timed(() => as('POST', `${a}/validate-sql`, { sql }));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ valid: false, error: expect.stringMatching(/is not allowed/) });
      expect(ms).toBeLessThan(2_000);
      const layer = await as('POST', `${a}/layers`, {
        public_id: uniqueName('view'),
        sql_view: { sql, geometry_column: 'geom', id_column: 'id' },
      });
      expect(layer.status, layer.text).toBe(422);
    }
  });

  it('refuses on enabling a draft whose view calls a function of the row that only the catalog reveals', async () => {
    const admin = new pg.Client({
      ...connection,
      user: 'postgres',
      password: JSON.parse(readFileSync(join(host.dataDir, 'postgis.json'), 'utf8')).admin_password,
    });
    await admin.connect();
    try {
      await admin.query(`CREATE OR REPLACE FUNCTION public.leak(p public.places) RETURNS text
        LANGUAGE sql AS $$ SELECT current_setting('server_version') $$`);
    } finally {
      await admin.end();
    }
    const a = await workspaceWithService();
    const sql = 'SELECT p.id, p.geom, p.leak AS v FROM places p';
    // A draft doesn't touch the source: only the parse tree speaks, and `p.leak` may be a column.
    const draft = await as('POST', `${a}/layers`, {
      public_id: uniqueName('view'),
      enabled: false,
      sql_view: { sql, geometry_column: 'geom', id_column: 'id' },
    });
    expect(draft.status, draft.text).toBe(201);
    const enable = await as('PUT', `${a}/layers/${draft.body.id}`, { enabled: true });
    expect(enable.status, enable.text).toBe(422);
    expect(enable.body.detail).toMatch(/leak is not allowed: attribute notation/);
    const check = await as('POST', `${a}/validate-sql`, { sql });
    expect(check.body).toEqual({ valid: false, error: expect.stringMatching(/leak is not allowed/) });
  });

  it("stops workspace A's runaway view in place at its budget, answers it as an overrun, and serves workspace B's next request at once", async () => {
    const [a, b] = await Promise.all([workspaceWithService(), workspaceWithService()]);
    const slow = timed(() => as('POST', `${a}/validate-sql`, { sql: RUNAWAY }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // B's request arrives while A's statement holds the only backend.
    const meanwhile = timed(() =>
      as('POST', `${b}/validate-sql`, { sql: 'SELECT id, name, geom FROM places WHERE id < 5' }),
    );
    const first = await slow;
    expect(first.res.status, first.res.text).toBe(200);
    expect(first.res.body).toEqual({
      valid: false,
      error: 'The query did not finish within its 5000 ms budget and was stopped.',
    });
    expect(first.ms).toBeLessThan(7_000);
    // One backend (ADR 0031): a request that arrives while the runaway holds it can't be served
    // before the runaway is stopped; it is answered (200 when it got the backend in time, else
    // 503 after its connect timeout), never held past its own budget.
    const second = await meanwhile;
    if (second.res.status === 200) expect(second.res.body).toMatchObject({ valid: true });
    else expect(second.res.body).toMatchObject({ code: 503, reason: 'datasource_unavailable' });
    expect(second.ms).toBeLessThan(6_000);
    // Stopped in place (ADR 0108): nothing restarts, and the next request, from anyone, is served
    // right away.
    // The log says whether PostGIS restarted; the bound says the request was not held behind
    // anything (a budget is 5 s). 1.5 s was exceeded once (2.2 s) on a loaded CI machine.
    const next = await timed(() => as('POST', `${b}/validate-sql`, { sql: 'SELECT id, geom FROM roads' }));
    expect(next.res.body).toMatchObject({ valid: true });
    expect(next.ms).toBeLessThan(3_000);
    expect(host.output()).not.toMatch(/restarting PostGIS/);
  }, 60_000);

  it('answers a layer whose view overruns as 422 query_budget_exceeded, and writes nothing', async () => {
    const a = await workspaceWithService();
    const res = await as('POST', `${a}/layers`, {
      public_id: uniqueName('view'),
      sql_view: { sql: RUNAWAY, geometry_column: 'geom', id_column: 'id' },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.reason).toBe('query_budget_exceeded');
    const layers = await as('GET', `${a}/layers`);
    expect(layers.body.layers).toEqual([]);
  }, 60_000);

  it("serves workspace B's next request, not 503, after workspace A's view that ignores its cancel restarted the PostGIS worker (from its warm standby)", async () => {
    const [a, b] = await Promise.all([workspaceWithService(), workspaceWithService()]);
    // The host loads a standby beside the serving worker after it starts (ADR 0142).
    await vi
      .waitUntil(() => /a warm standby waits for the next restart/.test(host.output()), {
        timeout: 120_000,
        interval: 100,
      })
      .catch(() => {
        throw new Error(`no warm standby logged:\n${host.output().slice(-4_000)}`);
      });
    const takeovers = () => host.output().match(/opening the data dir in the warm standby/g)?.length ?? 0;
    const before = takeovers();
    const runaway = await as('POST', `${a}/validate-sql`, { sql: DEAF });
    expect(runaway.status, runaway.text).toBe(200);
    expect(runaway.body).toEqual({
      valid: false,
      error: 'The query did not finish within its 5000 ms budget and was stopped.',
    });
    // B asks once, right after A's answer: it waits at the door for the restart within its own
    // budget instead of being refused, and is answered.
    const next = await as('POST', `${b}/validate-sql`, { sql: 'SELECT id, geom FROM roads' });
    expect(next.status, next.text).toBe(200);
    // Answered, not refused: valid, or — on a machine so loaded that the restart took most of B's
    // 5 s budget, which its wait at the door counts against — told its budget ran out.
    expect([
      { valid: true },
      { valid: false, error: 'The query did not finish within its 5000 ms budget and was stopped.' },
    ]).toContainEqual(next.body.valid === true ? { valid: true } : next.body);
    // A restart stopped A's statement, and it took over the warm standby.
    expect(takeovers()).toBe(before + 1);
  }, 180_000);

  it('refuses SQL over 64 KiB with a 400 before it reaches the parser', async () => {
    const a = await workspaceWithService();
    const sql = `SELECT id, geom FROM places -- ${'x'.repeat(64 * 1024)}`;
    const res = await as('POST', `${a}/validate-sql`, { sql });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ code: 400, reason: expect.any(String), request_id: expect.any(String) });
  });
});
