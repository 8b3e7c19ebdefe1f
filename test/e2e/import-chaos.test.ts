import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type ApiResponse, call, uniqueName } from '../support/client.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';
import { freePort } from '../support/ports.ts';

/**
 * Chaos (ADR 0083): kill -9 the local host during a 200,000-feature load and during a rollback,
 * start it again on the same data dir, PostGIS port, table and DynamoDB, and see each resume and
 * complete — with the exact row count (no duplicated, no lost rows) and zero orphan tables.
 */
const FEATURES = 200_000;
const TABLE = `impchaos-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const hosts: HostProcess[] = [];
let postgisPort = 0;

async function startHost(dataDir?: string): Promise<HostProcess> {
  const host = await startHostProcess({
    GEOPLANE_DYNAMODB_ENDPOINT: inject('host').dynamoEndpoint,
    GEOPLANE_TABLE_NAME: TABLE,
    GEOPLANE_RATE_LIMIT_RPS: '100000',
    GEOPLANE_RATE_LIMIT_BURST: '100000',
    GEOPLANE_POSTGIS: 'on',
    GEOPLANE_POSTGIS_PORT: String(postgisPort),
    // Short steps: the load hands back to the state machine every few seconds.
    IMPORT_STEP_BUDGET_MS: '3000',
    ...(dataDir ? { GEOPLANE_DATA_DIR: dataDir } : {}),
  });
  hosts.push(host);
  return host;
}

function on(host: HostProcess) {
  return (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    call(method, path, {
      baseUrl: host.url,
      dataDir: host.dataDir,
      headers: { 'X-API-Key': host.apiKey as string },
      ...(body === undefined ? {} : { body }),
    });
}

async function until(
  api: ReturnType<typeof on>,
  path: string,
  done: (job: Record<string, any>) => boolean,
  ms = 300_000,
): Promise<Record<string, any>> {
  const end = Date.now() + ms;
  for (;;) {
    const res = await api('GET', path);
    expect(res.status, res.text).toBe(200);
    if (done(res.body) || Date.now() > end) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Streams a FeatureCollection of `n` points (200,000 by default) to disk; `n` values from `offset`. */
async function writePoints(path: string, n = FEATURES, offset = 0): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) =>
    out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', () => r()));
  await write('{"type":"FeatureCollection","features":[');
  for (let i = offset; i < offset + n; i++) {
    const f = `{"type":"Feature","properties":{"n":${i},"name":"p${i}"},"geometry":{"type":"Point","coordinates":[${(i % 3600) / 10 - 180},${(i % 1800) / 10 - 90}]}}`;
    await write(i === offset ? f : `,${f}`);
  }
  await write(']}');
  await new Promise<void>((r) => out.end(r));
}

/** The host's embedded PostGIS as its superuser (one short connection). */
async function query<T>(dataDir: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const marker = JSON.parse(readFileSync(join(dataDir, 'postgis.json'), 'utf8'));
  const client = new pg.Client({
    host: '127.0.0.1',
    port: postgisPort,
    database: 'postgres',
    user: 'postgres',
    password: marker.admin_password,
  });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const host of hosts.reverse()) {
    await host.stop('SIGKILL');
    host.cleanup();
  }
});

describe('import chaos', () => {
  it(`kill -9 during a ${FEATURES.toLocaleString('en-US')}-feature load and during its rollback: both complete, exact rows, zero orphans`, async () => {
    postgisPort = await freePort();
    const first = await startHost();
    const dataDir = first.dataDir;
    let api = on(first);
    const ws = (await api('POST', '/workspaces', { name: uniqueName('chaos') })).body as { id: string };
    const file = join(dataDir, 'import-sources', 'points.geojson');
    await writePoints(file);
    const created = await api('POST', `/workspaces/${ws.id}/imports`, { source: { kind: 'uri', uri: file } });
    expect(created.status, created.text).toBe(201);
    const path = `/workspaces/${ws.id}/imports/${created.body.id}`;

    // Mid-load: some chunks committed, far from all.
    const mid = await until(
      api,
      path,
      (j) => (j.phase === 'transform' && j.processed_features >= 10_000) || j.status === 'failed',
    );
    expect(mid.status, JSON.stringify(mid)).toBe('running');
    expect(mid.processed_features).toBeLessThan(FEATURES);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    // A second host on the table with GEOPLANE_RESUME_WORK=off leaves the import alone: it
    // neither logs a resume nor moves the job (the test hosts sharing the run's table rely on it).
    const bystander = await startHostProcess({
      GEOPLANE_DYNAMODB_ENDPOINT: inject('host').dynamoEndpoint,
      GEOPLANE_TABLE_NAME: TABLE,
      GEOPLANE_RESUME_WORK: 'off',
    });
    hosts.push(bystander);
    const before = await until(on(bystander), path, () => true);
    await new Promise((r) => setTimeout(r, 1500));
    expect(bystander.output()).not.toMatch(/resumed \d+ unfinished/);
    const after = await until(on(bystander), path, () => true);
    expect(after.status, JSON.stringify(after)).toBe('running');
    expect(after.version).toBe(before.version);
    expect(after.processed_features).toBe(before.processed_features);
    await bystander.stop();

    const second = await startHost(dataDir);
    expect(second.output()).toMatch(/resumed 1 unfinished import/);
    api = on(second);
    const ready = await until(api, path, (j) => ['ready_to_publish', 'failed'].includes(j.status));
    expect(ready.status, JSON.stringify(ready)).toBe('ready_to_publish');
    expect(ready.processed_features).toBe(FEATURES);
    const hex = created.body.id.replaceAll('-', '');
    const [rows] = await query<{ n: string; d: string }>(
      dataDir,
      `SELECT count(*) AS n, count(DISTINCT fid) AS d FROM import_staging_${hex}.points`,
    );
    expect(Number(rows?.n)).toBe(FEATURES);
    expect(Number(rows?.d)).toBe(FEATURES);

    expect((await api('POST', `${path}/publish`)).status).toBe(202);
    const published = await until(api, path, (j) => ['published', 'failed'].includes(j.status));
    expect(published.status, JSON.stringify(published)).toBe('published');
    const [served] = await query<{ n: string }>(dataDir, `SELECT count(*) AS n FROM import_${hex}.points`);
    expect(Number(served?.n)).toBe(FEATURES);

    // During the rollback.
    const rolling = await api('POST', `${path}/rollback`);
    expect(rolling.status, rolling.text).toBe(202);
    expect(rolling.body.status).toBe('rolling_back');
    second.child.kill('SIGKILL');
    await new Promise((r) => second.child.once('exit', r));

    const third = await startHost(dataDir);
    api = on(third);
    const end = await until(api, path, (j) => ['rolled_back', 'failed'].includes(j.status));
    expect(end.status, JSON.stringify(end)).toBe('rolled_back');
    expect((await api('GET', `/workspaces/${ws.id}/services/${published.service_id}`)).status).toBe(404);
    const left = await query<{ nspname: string }>(
      dataDir,
      `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'import%' AND nspname LIKE $1`,
      [`%${hex}`],
    );
    expect(left).toEqual([]);
    const history = (await api('GET', `${path}/history?limit=1000`)).body.events as { status: string }[];
    expect(history.map((e) => e.status).at(-1)).toBe('rolled_back');
  }, 900_000);
  it('kill -9 while a replace publishes (ADR 0127): the publish resumes, the layer holds one whole generation, and its rollback restores the first exactly', async () => {
    // The host the test before left running (one PostGIS start less), else a new one.
    const last = hosts.at(-1);
    let first: HostProcess;
    if (last && last.child.exitCode === null && last.child.signalCode === null) first = last;
    else {
      postgisPort = await freePort();
      first = await startHost();
    }
    const dataDir = first.dataDir;
    let api = on(first);
    const ws = (await api('POST', '/workspaces', { name: uniqueName('swap') })).body as { id: string };
    const old = join(dataDir, 'import-sources', 'old.geojson');
    const next = join(dataDir, 'import-sources', 'new.geojson');
    await writePoints(old, 60_000);
    await writePoints(next, 80_000, 1_000_000);
    const original = await api('POST', `/workspaces/${ws.id}/imports`, {
      source: { kind: 'uri', uri: old },
      layers: [{ public_id: 'points' }],
      auto_publish: true,
    });
    expect(original.status, original.text).toBe(201);
    const published = await until(api, `/workspaces/${ws.id}/imports/${original.body.id}`, (j) =>
      ['published', 'failed'].includes(j.status),
    );
    expect(published.status, JSON.stringify(published)).toBe('published');
    const relation = `import_${original.body.id.replaceAll('-', '')}.points`;
    const fingerprint = async () =>
      (
        await query<{ n: string; sum: string }>(
          dataDir,
          `SELECT count(*)::text AS n, md5(string_agg(t::text, '|' ORDER BY fid)) AS sum FROM ${relation} t`,
        )
      )[0];
    const before = await fingerprint();
    expect(Number(before?.n)).toBe(60_000);

    const replace = await api('POST', `/workspaces/${ws.id}/imports`, {
      source: { kind: 'uri', uri: next },
      layers: [{ target: { layer: 'points', mode: 'replace' } }],
      auto_publish: true,
    });
    expect(replace.status, replace.text).toBe(201);
    const path = `/workspaces/${ws.id}/imports/${replace.body.id}`;
    // The kill lands in the publish: its first step is the swap's transaction (seconds for 80,000
    // rows on the embedded PostGIS, which serves one statement at a time, so it can't be watched).
    const publishing = await until(api, path, (j) =>
      ['publishing', 'published', 'failed'].includes(j.status),
    );
    expect(publishing.status, JSON.stringify(publishing)).toBe('publishing');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await startHost(dataDir);
    api = on(second);
    // Before the resumed publish, and after it, the layer holds one whole generation.
    const during = await fingerprint();
    expect([60_000, 80_000]).toContain(Number(during?.n));
    const done = await until(api, path, (j) => ['published', 'failed'].includes(j.status));
    expect(done.status, JSON.stringify(done)).toBe('published');
    expect(Number((await fingerprint())?.n)).toBe(80_000);
    const [distinct] = await query<{ n: string }>(
      dataDir,
      `SELECT count(DISTINCT fid)::text AS n FROM ${relation}`,
    );
    expect(Number(distinct?.n)).toBe(80_000);

    expect((await api('POST', `${path}/rollback`)).status).toBe(202);
    const undone = await until(api, path, (j) => ['rolled_back', 'failed'].includes(j.status));
    expect(undone.status, JSON.stringify(undone)).toBe('rolled_back');
    expect(await fingerprint()).toEqual(before);
    const hex = replace.body.id.replaceAll('-', '');
    const left = await query<{ nspname: string }>(
      dataDir,
      `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'import%' AND nspname LIKE $1`,
      [`%${hex}`],
    );
    expect(left).toEqual([]);
  }, 900_000);
});
