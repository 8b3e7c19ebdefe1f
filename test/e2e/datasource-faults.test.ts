import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';
import { FAULT_HOST } from '../support/host-process.ts';

let postgis: { host: string; port: number; database: string; user: string; password: string };

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

/**
 * A TCP relay to the embedded PostGIS that can be switched off, to make the data source "go down".
 * It listens on the test hosts' allowed fault address (ADR 0074).
 */
async function relay(): Promise<{ port: number; down(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: postgis.host, port: postgis.port });
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((r) => server.listen(0, FAULT_HOST, r));
  const { port } = server.address() as { port: number };
  return {
    port,
    down: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a data source that goes down', () => {
  it('answers 503 for createLayer, validate-sql and discover, 200 ok:false for test-connection, and writes nothing', async () => {
    const ws = await createWorkspace();
    const link = await relay();
    const created = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'flaky', type: 'postgis', connection: { ...postgis, host: FAULT_HOST, port: link.port } },
    });
    expect(created.status, created.text).toBe(201);
    const base = `/workspaces/${ws.id}/services/${created.body.id}`;
    await link.down();

    const started = Date.now();
    expectError(
      await call('POST', `${base}/layers`, { headers: asSuperAdmin(), body: { source_layer: 'places' } }),
      503,
    );
    expectError(
      await call('POST', `${base}/validate-sql`, {
        headers: asSuperAdmin(),
        body: { sql: 'SELECT * FROM places' },
      }),
      503,
    );
    expectError(await call('POST', `${base}/discover`, { headers: asSuperAdmin() }), 503);
    // test-connection reports the target's state as its answer, not as our outage (ADR 0087).
    const tested = await call('POST', `${base}/test-connection`, { headers: asSuperAdmin() });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.headers).not.toHaveProperty('retry-after');
    expect(tested.body).toMatchObject({
      ok: false,
      message: expect.stringMatching(/could not be reached, or did not answer as PostgreSQL/),
    });
    // Each answers within its retry window (ADR 0033 amendment: up to ~5 s of retries, then 503).
    expect(Date.now() - started).toBeLessThan(30_000);

    // Nothing half-written: no layer, and the public id is still free.
    expect((await call('GET', `${base}/layers`, { headers: asSuperAdmin() })).body.layers).toEqual([]);
    const draft = await call('POST', `${base}/layers`, {
      headers: asSuperAdmin(),
      body: { source_layer: 'places', enabled: false },
    });
    expect(draft.status).toBe(201);
  });
});

describe('hostile SQL through validate-sql', () => {
  let client: pg.Client;
  let path: string;
  beforeAll(async () => {
    client = new pg.Client(postgis);
    await client.connect();
    const ws = await createWorkspace();
    const service = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'pg', type: 'postgis', connection: postgis },
    });
    path = `/workspaces/${ws.id}/services/${service.body.id}/validate-sql`;
  });
  afterAll(async () => {
    await client.end();
  });

  const hostile = [
    'DELETE FROM places',
    'UPDATE places SET name = NULL',
    'INSERT INTO places (name) VALUES ($$x$$)',
    'DROP TABLE places',
    'TRUNCATE places',
    'ALTER TABLE places ADD COLUMN pwned int',
    'CREATE TABLE pwned AS SELECT * FROM places',
    'SELECT 1; DELETE FROM places',
    'SELECT 1; DROP TABLE places; --',
    'SELECT * INTO pwned FROM places',
    'WITH gone AS (DELETE FROM places RETURNING *) SELECT * FROM gone',
    'SELECT * FROM (WITH u AS (UPDATE places SET name = NULL RETURNING 1) SELECT * FROM u) q',
    'SELECT * FROM places FOR UPDATE',
    'SELECT * FROM places FOR SHARE',
    'SELECT * FROM places FOR NO KEY UPDATE',
    'SELECT * FROM places FOR KEY SHARE',
    'SELECT pg_sleep(5)',
    'SELECT * FROM places ORDER BY pg_sleep(1)',
    'SELECT pg_catalog.pg_sleep(1)',
    'SELECT "pg_sleep"(1)',
    'COPY places TO STDOUT',
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT dblink('host=10.0.0.1', 'DELETE FROM places')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT nextval('places_id_seq')",
    'SELECT txid_current()',
    'SELECT pg_advisory_lock(1)',
    'SELECT pg_terminate_backend(1)',
    'SELECT * FROM pg_shadow',
    '/* comment */ DELETE FROM places -- tail',
    "SELECT 'x' /* ; */ ; DELETE FROM places",
    'DO $$ BEGIN DELETE FROM places; END $$',
    'EXPLAIN ANALYZE DELETE FROM places',
    'SET default_transaction_read_only = off',
    'BEGIN; DELETE FROM places; COMMIT',
    'GRANT ALL ON places TO PUBLIC',
    'VACUUM places',
    'LISTEN x',
    'CALL some_procedure()',
  ];

  it(`refuses ${hostile.length} hostile statements with valid:false and executes none of them`, async () => {
    const fingerprint = async () =>
      (
        await client.query(
          `SELECT (SELECT count(*) FROM places)::int AS places, (SELECT count(name) FROM places)::int AS named,
                  (SELECT md5(string_agg(id::text || coalesce(name, ''), ',' ORDER BY id)) FROM places) AS digest,
                  (SELECT count(*) FROM pg_tables WHERE tablename = 'pwned')::int AS pwned,
                  (SELECT count(*) FROM information_schema.columns WHERE column_name = 'pwned')::int AS pwned_columns`,
        )
      ).rows[0];
    const before = await fingerprint();
    for (const sql of hostile) {
      const res = await call('POST', path, { headers: asSuperAdmin(), body: { sql } });
      expect(res.status, sql).toBe(200);
      expect(res.body.valid, sql).toBe(false);
      expect(res.body.error, sql).toEqual(expect.any(String));
    }
    expect(await fingerprint()).toEqual(before);
  }, 120_000);
});
