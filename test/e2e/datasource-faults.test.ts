import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';

let postgis: { host: string; port: number; database: string; user: string; password: string };

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

/** A TCP relay to the embedded PostGIS that can be switched off, to make the data source "go down". */
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
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
  it('answers 503 for createLayer, validate-sql, discover and test-connection, and writes nothing', async () => {
    const ws = await createWorkspace();
    const link = await relay();
    const created = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'flaky', type: 'postgis', connection: { ...postgis, port: link.port } },
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
    expectError(await call('POST', `${base}/test-connection`, { headers: asSuperAdmin() }), 503);
    expect(Date.now() - started).toBeLessThan(20_000);

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
  beforeAll(async () => {
    client = new pg.Client(postgis);
    await client.connect();
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
    'SELECT 1; DELETE FROM places',
    'SELECT * INTO copy_of_places FROM places',
    'WITH gone AS (DELETE FROM places RETURNING *) SELECT * FROM gone',
    'SELECT * FROM places FOR UPDATE',
    'SELECT pg_sleep(5)',
    'COPY places TO STDOUT',
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    'CREATE TABLE x AS SELECT * FROM places',
    '/* comment */ DELETE FROM places -- tail',
  ];

  it.each(hostile)('refuses %j with valid:false and does not execute it', async (sql) => {
    const ws = await createWorkspace();
    const service = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'pg', type: 'postgis', connection: postgis },
    });
    const before = (await client.query('SELECT count(*)::int AS n, count(name)::int AS named FROM places'))
      .rows[0];
    const res = await call('POST', `/workspaces/${ws.id}/services/${service.body.id}/validate-sql`, {
      headers: asSuperAdmin(),
      body: { sql },
    });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.error).toEqual(expect.any(String));
    const after = (await client.query('SELECT count(*)::int AS n, count(name)::int AS named FROM places'))
      .rows[0];
    expect(after).toEqual(before);
    const tables = await client.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename IN ('x', 'copy_of_places')",
    );
    expect(tables.rows[0].n).toBe(0);
  });
});
