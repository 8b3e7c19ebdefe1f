import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { zipOf } from '../fixtures/imports/zip-writer.ts';
import { type ApiResponse, call } from '../support/client.ts';
import { expectError } from '../support/fixtures.ts';
import { FAULT_HOST, type HostProcess, startHostProcess } from '../support/host-process.ts';
import { upload } from '../support/imports.ts';
import { freePort } from '../support/ports.ts';

/**
 * Import limits, the workspace's import quota and what a failure shows (ADR 0110), black box on a
 * local host of its own: small limits, and an import database nobody listens at (a loopback port of
 * the fault host), so every refusal is decided before a load, loads never finish (their
 * reservations stay held), and a teardown fails on the outage — whose error a user must read
 * without the database's address.
 */
vi.setConfig({ testTimeout: 300_000 });

const TABLE = `impquota-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
let host: HostProcess;
let closedPort = 0;

beforeAll(async () => {
  closedPort = await freePort();
  host = await startHostProcess({
    GEOPLANE_DYNAMODB_ENDPOINT: inject('host').dynamoEndpoint,
    GEOPLANE_TABLE_NAME: TABLE,
    GEOPLANE_RATE_LIMIT_RPS: '100000',
    GEOPLANE_RATE_LIMIT_BURST: '100000',
    IMPORT_DATABASE: JSON.stringify({
      host: FAULT_HOST,
      port: closedPort,
      database: 'geoplane_imports',
      user: 'geoplane_importer',
      password: 'not-the-password',
      sslmode: 'disable',
    }),
    IMPORT_MAX_LAYERS: '1',
    IMPORT_MAX_ROWS: '50',
    IMPORT_WORKSPACE_MAX_ROWS: '80',
    IMPORT_WORKSPACE_MAX_BYTES: '1000000',
  });
});

afterAll(async () => {
  await host?.stop();
  host?.cleanup();
});

function api(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return call(method, path, {
    baseUrl: host.url,
    dataDir: host.dataDir,
    headers: { 'X-API-Key': host.apiKey as string },
    ...(body === undefined ? {} : { body }),
  });
}

async function workspace(): Promise<string> {
  const res = await api('POST', '/workspaces', { name: `q-${Math.random().toString(36).slice(2, 10)}` });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** Creates an upload import, uploads `file` and starts it. */
async function imported(ws: string, file: Buffer, filename: string): Promise<string> {
  const created = await api('POST', `/workspaces/${ws}/imports`, {
    source: { kind: 'upload', filename, size_bytes: file.length },
  });
  expect(created.status, created.text).toBe(201);
  const sent = await upload(created.body.upload, file, filename, host.dataDir);
  expect(sent.status, sent.text).toBe(204);
  expect((await api('POST', `/workspaces/${ws}/imports/${created.body.id}/start`)).status).toBe(202);
  return created.body.id;
}

async function until(ws: string, id: string, statuses: string[], ms = 60_000): Promise<Record<string, any>> {
  const end = Date.now() + ms;
  for (;;) {
    const res = await api('GET', `/workspaces/${ws}/imports/${id}`);
    expect(res.status, res.text).toBe(200);
    if (statuses.includes(res.body.status) || Date.now() > end) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A CSV of `n` points in lon/lat (a known CRS: it loads at once). */
const lonLat = (n: number) =>
  Buffer.from(`name,lat,lon\n${Array.from({ length: n }, (_, i) => `p${i},48.${i},11.${i}`).join('\n')}\n`);
/** A CSV of `n` WKT points in no known CRS: it waits for a plan. */
const projected = (n: number) =>
  Buffer.from(
    `id,wkt\n${Array.from({ length: n }, (_, i) => `${i},POINT(${500000 + i} ${5400000 + i})`).join('\n')}\n`,
  );
const shapefiles = () => {
  const dir = join(import.meta.dirname, '../fixtures/imports/shp');
  return zipOf(
    readdirSync(dir)
      .filter((f) => f.startsWith('roads.') || f.startsWith('wells.'))
      .map((f) => ({ name: f, data: readFileSync(join(dir, f)) })),
  );
};

describe("one import's limits (ADR 0110)", () => {
  it('a file with more features than an import loads fails before anything is staged, saying why', async () => {
    const ws = await workspace();
    const id = await imported(ws, lonLat(60), 'many.csv');

    const job = await until(ws, id, ['failed', 'ready_to_publish', 'awaiting_plan']);

    expect(job.status, JSON.stringify(job)).toBe('failed');
    expect(job.error_reason).toBe('import_row_limit');
    expect(job.error_message).toMatch(/loads 60 features; an import loads at most 50/);
    expect(job.discovery.layers[0].feature_count).toBe(60);
    const history = await api('GET', `/workspaces/${ws}/imports/${id}/history`);
    expect(history.body.events.at(-1)).toMatchObject({ status: 'failed', error_reason: 'import_row_limit' });
  });

  it('a file with more layers than an import loads: a smaller plan is taken, a larger one refused (422)', async () => {
    const ws = await workspace();
    const id = await imported(ws, shapefiles(), 'two.zip');
    const job = await until(ws, id, ['failed', 'ready_to_publish', 'awaiting_plan']);
    expect(job.status, JSON.stringify(job)).toBe('failed');
    expect(job.error_reason).toBe('import_layer_limit');
    expect(job.plan.layers).toHaveLength(2);
    const [roads, wells] = job.plan.layers;
    const plan = (layers: unknown[]) => api('PUT', `/workspaces/${ws}/imports/${id}/plan`, { layers });

    expectError(await plan([roads, wells]), 422, 'import_layer_limit');
    const twice = await plan([roads, { ...roads, public_id: 'roads-again' }]);
    expectError(twice, 400, 'invalid_plan');
    expect(twice.body.detail).toMatch(/source layer 'roads' is already loaded by layers\[0\]/);
    const smaller = await plan([roads]);
    expect(smaller.status, smaller.text).toBe(200);
    expect(smaller.body.status).toBe('failed');
  });
});

describe("the workspace's import quota (ADR 0110)", () => {
  it("reserves each plan's rows as it loads and refuses the plan that would pass the quota (422)", async () => {
    const ws = await workspace();
    const ids = [
      await imported(ws, projected(30), 'a.csv'),
      await imported(ws, projected(30), 'b.csv'),
      await imported(ws, projected(30), 'c.csv'),
    ];
    const plans: Record<string, any>[] = [];
    for (const id of ids) {
      const waiting = await until(ws, id, ['awaiting_plan', 'failed']);
      expect(waiting.status, JSON.stringify(waiting)).toBe('awaiting_plan');
      plans.push({ layers: [{ ...waiting.plan.layers[0], source_srid: 32632 }] });
    }
    const put = (i: number) => api('PUT', `/workspaces/${ws}/imports/${ids[i]}/plan`, plans[i]);

    expect((await put(0)).status).toBe(200);
    expect((await put(1)).status).toBe(200);
    const refused = await put(2);

    expectError(refused, 422, 'workspace_import_quota');
    expect(refused.body.detail).toMatch(/hold 60 of its 80 import rows; this import needs 30/);
    expect((await api('GET', `/workspaces/${ws}/imports/${ids[2]}`)).body.status).toBe('awaiting_plan');
    // Another workspace has a quota of its own.
    const other = await workspace();
    const elsewhere = await imported(other, projected(30), 'd.csv');
    const waiting = await until(other, elsewhere, ['awaiting_plan', 'failed']);
    const own = await api('PUT', `/workspaces/${other}/imports/${elsewhere}/plan`, {
      layers: [{ ...waiting.plan.layers[0], source_srid: 32632 }],
    });
    expect(own.status, own.text).toBe(200);
  });
});

describe('what a failure shows a user (ADR 0110)', () => {
  it("a teardown that fails on the import database's outage names the outage, not the database", async () => {
    const ws = await workspace();
    const id = await imported(ws, projected(5), 'gone.csv');
    const waiting = await until(ws, id, ['awaiting_plan', 'failed']);
    expect(waiting.status, JSON.stringify(waiting)).toBe('awaiting_plan');
    const cancelled = await api('DELETE', `/workspaces/${ws}/imports/${id}`);
    expect(cancelled.status, cancelled.text).toBe(202);

    // The teardown's drop is retried with backoff (about a minute) before the failure is recorded.
    const failed = await until(ws, id, ['failed', 'cancelled'], 240_000);

    expect(failed.status, JSON.stringify(failed)).toBe('failed');
    expect(failed.error_reason).toBe('import_database_unavailable');
    const shown = [
      failed.error_message,
      ...(await api('GET', `/workspaces/${ws}/imports/${id}/history`)).body.events.map(
        (e: { error_message?: string }) => e.error_message ?? '',
      ),
      ...(await api('GET', `/workspaces/${ws}/imports`)).body.imports.map(
        (j: { error_message?: string }) => j.error_message ?? '',
      ),
    ].join('\n');
    expect(shown).toMatch(/import database/);
    for (const internal of [
      FAULT_HOST,
      String(closedPort),
      'geoplane_imports',
      'geoplane_importer',
      'ECONNREFUSED',
      'TransientError',
    ])
      expect(shown).not.toContain(internal);
  });
});
