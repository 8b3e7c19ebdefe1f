/**
 * The persistent tile cache and the caches' operations (ADR 0139, issue #26) on the shared local
 * host: tiles are kept per layer under a key carrying what their bytes depend on (a change misses
 * at once, and the host's minute sweep removes what it left behind), access is decided before any
 * lookup, the workspace's usage is counted exactly, the quota and the settings' switch are
 * honoured, clears take effect, and seed / reseed / truncate jobs do what they say — each figure
 * checked against the tile store's own directory. Assertions that a sweep could race (it removes
 * stale tiles only) are written to hold whether or not it ran in between.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type ApiResponse, asSuperAdmin, call } from '../support/client.ts';
import { changeLayer, ogc, publishLayer, servedWorkspace, setSettings } from '../support/data-plane.ts';
import { createKey, expectError, withKey } from '../support/fixtures.ts';

interface Served {
  ws: { id: string; name: string };
  service: { id: string; name: string };
  places: { id: string; public_id: string };
  roads: { id: string; public_id: string };
  parcels: { id: string; public_id: string };
  viewer: string;
  editor: string;
  admin: string;
}

/** The tiles the store holds for a workspace (or one of its layers): key → body bytes (file less its 32-byte header). */
function storedTiles(workspaceId: string, layerId?: string): Map<string, number> {
  const root = join(inject('host').dataDir, 'tile-cache');
  const out = new Map<string, number>();
  const walk = (dir: string, rel: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(dir, name);
      const key = rel ? `${rel}/${name}` : name;
      if (statSync(path).isDirectory()) walk(path, key);
      else if (name.endsWith('.mvt')) out.set(key, statSync(path).size - 32);
    }
  };
  const base = layerId ? `${workspaceId}/${layerId}` : workspaceId;
  walk(join(root, base), base);
  return out;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

function api(method: string, path: string, headers: Record<string, string> = asSuperAdmin(), body?: unknown) {
  return call(method, path, { headers, ...(body === undefined ? {} : { body }) });
}

async function stats(ws: string) {
  const res = await api('GET', `/workspaces/${ws}/tile-cache/stats`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    entries: number;
    bytes: number;
    generation: number;
    store: string;
    cache_enabled: boolean;
  };
}

async function finished(ws: string, job: string): Promise<ApiResponse> {
  for (let i = 0; i < 600; i++) {
    const res = await api('GET', `/workspaces/${ws}/tile-cache/jobs/${job}`);
    expect(res.status, res.text).toBe(200);
    if (['succeeded', 'failed', 'cancelled'].includes(res.body.status)) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${job} did not finish`);
}

async function runJob(ws: string, body: Record<string, unknown>) {
  const res = await api('POST', `/workspaces/${ws}/tile-cache/jobs`, asSuperAdmin(), body);
  expect(res.status, res.text).toBe(202);
  expect(res.headers.location).toMatch(new RegExp(`/workspaces/${ws}/tile-cache/jobs/${res.body.id}$`));
  const done = await finished(ws, res.body.id);
  expect(done.body.status, done.text).toBe('succeeded');
  return done.body;
}

let s: Served;

beforeAll(async () => {
  const { ws, service } = await servedWorkspace();
  const places = await publishLayer(ws.id, service.id, { source_layer: 'public.places', public: true });
  const roads = await publishLayer(ws.id, service.id, { source_layer: 'public.roads' });
  const parcels = await publishLayer(ws.id, service.id, { source_layer: 'public.parcels', public: true });
  await setSettings(ws.id, 'ogc-tiles', { enabled: true });
  const viewer = (await createKey(ws.id, 'viewer')).key;
  const editor = (await createKey(ws.id, 'editor')).key;
  const admin = (await createKey(ws.id, 'admin')).key;
  s = { ws, service, places, roads, parcels, viewer, editor, admin };
}, 120_000);

describe('the persistent tile cache on the data plane', () => {
  it('a tile is rendered once, then served from the store with the same bytes; the usage counts it exactly', async () => {
    const before = await stats(s.ws.id);
    expect(before).toMatchObject({ store: 'directory', cache_enabled: true, entries: 0, bytes: 0 });
    const first = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(first.status, first.text).toBe(200);
    expect(first.headers['geoplane-tile-cache']).toBe('miss');
    const second = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(second.headers['geoplane-tile-cache']).toBe('hit');
    expect(Buffer.compare(second.raw as Buffer, first.raw as Buffer)).toBe(0);
    expect(second.headers['geoplane-tile-features']).toBe(first.headers['geoplane-tile-features']);
    expect(second.headers.etag).toBe(first.headers.etag);
    const files = storedTiles(s.ws.id, s.roads.id);
    expect(files.size).toBe(1);
    expect([...files.keys()][0]).toMatch(new RegExp(`^${s.ws.id}/${s.roads.id}/[0-9a-f]{16}/4/7/5\\.mvt$`));
    expect([...files.values()][0]).toBe((first.raw as Buffer).length);
    const after = await stats(s.ws.id);
    expect(after.entries).toBe(1);
    expect(after.bytes).toBe((first.raw as Buffer).length);
  });

  it('a changed layer misses at once (its version is in the key); the sweep then removes the old tiles and their usage', async () => {
    await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    const before = [...storedTiles(s.ws.id, s.roads.id).keys()];
    expect(before.length).toBeGreaterThan(0);
    await changeLayer(s.ws.id, s.service.id, s.roads, { title: 'Roads, retitled' });
    const changed = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(changed.status).toBe(200);
    expect(changed.headers['geoplane-tile-cache']).toBe('miss');
    const again = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(again.headers['geoplane-tile-cache']).toBe('hit');
    const current = [...storedTiles(s.ws.id, s.roads.id).keys()].filter((k) => !before.includes(k));
    expect(current.length).toBe(1);
    // The host sweeps every minute (ADR 0093): the old generation goes, the current one stays,
    // and the usage is what the store holds.
    await expect
      .poll(() => [...storedTiles(s.ws.id, s.roads.id).keys()], { timeout: 150_000, interval: 2_000 })
      .toEqual(current);
    await expect
      .poll(
        async () => {
          const now = storedTiles(s.ws.id);
          const st = await stats(s.ws.id);
          return [st.entries, st.bytes, now.size, sum(now)];
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toSatisfy(([entries, bytes, size, total]) => entries === size && bytes === total);
  }, 200_000);

  it('access is decided before the cache: a cached private layer is never served to a caller who may not read it', async () => {
    // The viewer has the private `roads` tile cached (above); an anonymous caller must not get it.
    const anonymous = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7');
    expect([401, 404]).toContain(anonymous.status);
    expect(anonymous.headers['content-type']).toMatch(/application\/json/);
    // The workspace tile (the Tiles service public, its layers as they are): the viewer's has all
    // three layers, the anonymous one only the two public ones.
    await setSettings(s.ws.id, 'ogc-tiles', { public: true });
    const full = await ogc(s.ws.id, '/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(full.status, full.text).toBe(200);
    expect(full.headers['geoplane-tile-cache']).toMatch(/^(partial|miss)$/);
    expect(Object.keys(new VectorTile(new PbfReader(full.raw as Buffer)).layers).sort()).toEqual([
      'parcels',
      'places',
      'roads',
    ]);
    const open = await ogc(s.ws.id, '/tiles/WebMercatorQuad/4/5/7');
    expect(open.status, open.text).toBe(200);
    expect(open.headers['geoplane-tile-cache']).toBe('hit');
    expect(Object.keys(new VectorTile(new PbfReader(open.raw as Buffer)).layers).sort()).toEqual([
      'parcels',
      'places',
    ]);
    // A viewer's workspace tile is now served whole from the cache, and is the same bytes as before.
    const cached = await ogc(s.ws.id, '/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(cached.headers['geoplane-tile-cache']).toBe('hit');
    expect(Buffer.compare(cached.raw as Buffer, full.raw as Buffer)).toBe(0);
    await setSettings(s.ws.id, 'ogc-tiles', { public: false });
  });

  it('an address that is not a canonical tile is never looked up or stored (the renderer answers 400/404)', async () => {
    const before = storedTiles(s.ws.id).size;
    for (const [path, status] of [
      ['/collections/places/tiles/WebMercatorQuad/04/5/7', 200],
      ['/collections/places/tiles/WebMercatorQuad/4/..%2F..%2F5/7', 400],
      ['/collections/places/tiles/WebMercatorQuad/25/0/0', 404],
      ['/collections/places/tiles/WebMercatorQuad/4/16/0', 404],
    ] as const) {
      const res = await ogc(s.ws.id, path);
      expect(res.status, `${path}: ${res.text}`).toBe(status);
      if (status === 200) expect(res.headers['geoplane-tile-cache']).toBe('off');
    }
    expect(storedTiles(s.ws.id).size).toBe(before);
  });

  it('the Tiles settings mean what they say: cache_enabled off renders every time and stores nothing; a quota stops storing', async () => {
    await setSettings(s.ws.id, 'ogc-tiles', {
      settings: { ...(await tilesSettings()), cache_enabled: false },
    });
    const before = await stats(s.ws.id);
    const off = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/3/2/4');
    expect(off.status).toBe(200);
    expect(off.headers['geoplane-tile-cache']).toBe('off');
    expect((await stats(s.ws.id)).entries).toBe(before.entries);
    // A quota the workspace already exceeds: tiles are rendered and served, never stored.
    await setSettings(s.ws.id, 'ogc-tiles', {
      settings: { ...(await tilesSettings()), cache_enabled: true, persistent_cache_quota_bytes: 1 },
    });
    for (let i = 0; i < 2; i++) {
      const res = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/3/2/4');
      expect(res.status).toBe(200);
      expect(res.headers['geoplane-tile-cache']).toBe('miss');
    }
    expect((await stats(s.ws.id)).entries).toBe(before.entries);
    const { persistent_cache_quota_bytes: _q, ...rest } = await tilesSettings();
    await setSettings(s.ws.id, 'ogc-tiles', { settings: { ...rest, cache_enabled: true } });
  });
});

async function tilesSettings(): Promise<Record<string, unknown>> {
  const res = await api('GET', `/workspaces/${s.ws.id}/settings/ogc-tiles`);
  return res.body.settings as Record<string, unknown>;
}

describe('clearing the caches', () => {
  it('clearWorkspaceCache moves the generation: every tile misses at once; the event is audited', async () => {
    await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7');
    expect(
      (await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7')).headers['geoplane-tile-cache'],
    ).toBe('hit');
    const before = await stats(s.ws.id);
    const viewerTry = await api('POST', `/workspaces/${s.ws.id}/cache/clear`, withKey(s.viewer));
    expectError(viewerTry, 403);
    const res = await api('POST', `/workspaces/${s.ws.id}/cache/clear`, withKey(s.admin));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      cleared: ['tiles', 'descriptions', 'connections'],
      generation: before.generation + 1,
    });
    // Every tile is stale now (the minute's sweep may have removed some meanwhile, never added any).
    expect(res.body.stale_entries).toBeGreaterThan(0);
    expect(res.body.stale_entries).toBeLessThanOrEqual(before.entries);
    const after = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7');
    expect(after.headers['geoplane-tile-cache']).toBe('miss');
    const audit = await api('GET', `/workspaces/${s.ws.id}/audit?limit=20`);
    expect(audit.status, audit.text).toBe(200);
    const change = (audit.body.records ?? audit.body.events ?? audit.body.items ?? [])
      .flatMap((r: { changes: { type: string }[] }) => r.changes)
      .find((c: { type: string }) => c.type === 'tile_cache');
    expect(change, audit.text).toMatchObject({ type: 'tile_cache', id: s.ws.id, action: 'updated' });
    const unknown = await api('POST', '/workspaces/00000000-0000-4000-8000-000000000000/cache/clear');
    expectError(unknown, 404);
  });

  it('clearCacheByType and clearAllCaches move the epochs getCacheStats shows; only super_admin; a bad type is 400', async () => {
    const before = await api('GET', '/cache/stats');
    expect(before.status, before.text).toBe(200);
    const epoch = (body: { caches: { type: string; epoch: number }[] }, t: string) =>
      body.caches.find((c) => c.type === t)?.epoch as number;
    await ogc(s.ws.id, '/collections/parcels/tiles/WebMercatorQuad/4/5/7');
    const tiles = await api('POST', '/cache/clear/tiles');
    expect(tiles.status, tiles.text).toBe(200);
    expect(tiles.body.cleared).toEqual(['tiles']);
    expect(tiles.body.epochs.tiles).toBe(epoch(before.body, 'tiles') + 1);
    expect(tiles.body.epochs.descriptions).toBe(epoch(before.body, 'descriptions'));
    expect(
      (await ogc(s.ws.id, '/collections/parcels/tiles/WebMercatorQuad/4/5/7')).headers['geoplane-tile-cache'],
    ).toBe('miss');
    const all = await api('POST', '/cache/clear');
    expect(all.status, all.text).toBe(200);
    expect(all.body.cleared).toEqual(['tiles', 'descriptions', 'connections']);
    const after = await api('GET', '/cache/stats');
    expect(epoch(after.body, 'tiles')).toBe(epoch(before.body, 'tiles') + 2);
    expect(epoch(after.body, 'descriptions')).toBe(epoch(before.body, 'descriptions') + 1);
    expect(after.body.caches.find((c: { type: string }) => c.type === 'tiles').cleared_at).toBeTruthy();
    // The data plane still answers after its instance caches were dropped.
    const served = await ogc(s.ws.id, '/collections/places/items?limit=1');
    expect(served.status, served.text).toBe(200);
    expectError(await api('POST', '/cache/clear/nonsense'), 400, 'invalid_cache_type');
    expectError(await api('POST', '/cache/clear', withKey(s.admin)), 403);
    expectError(await api('GET', '/cache/stats', withKey(s.admin)), 403);
    const unchanged = await api('GET', '/cache/stats');
    expect(epoch(unchanged.body, 'tiles')).toBe(epoch(after.body, 'tiles'));
  });
});

describe('tile cache jobs', () => {
  // bbox 0.5–22°E, 38–55°N: one tile at each of z0–z2 and two at z3 (x 4, y 2–3): 5 tiles a layer
  // (41°N would lie on the z3 row boundary, 40.98°N, and cover one).
  const bbox = [0.5, 38, 22, 55];

  it('seed renders exactly the tiles of the range that are missing; the usage grows by what it stored', async () => {
    // One current tile at least (the minute's sweep may have removed every stale one already).
    await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7');
    const truncated = await runJob(s.ws.id, { type: 'truncate' });
    expect(truncated.tiles_removed).toBeGreaterThan(0);
    expect(storedTiles(s.ws.id).size).toBe(0);
    expect(await stats(s.ws.id)).toMatchObject({ entries: 0, bytes: 0 });
    const job = await runJob(s.ws.id, {
      type: 'seed',
      layers: ['places', 'roads'],
      zoom_min: 0,
      zoom_max: 3,
      bbox,
    });
    expect(job).toMatchObject({ tiles_total: 10, tiles_done: 10, tiles_rendered: 10, tiles_skipped: 0 });
    expect(job.layers).toEqual(['places', 'roads']);
    const files = storedTiles(s.ws.id);
    expect(files.size).toBe(10);
    const addresses = [...files.keys()].map((k) => k.split('/').slice(3).join('/')).sort();
    expect(new Set(addresses)).toEqual(
      new Set(['0/0/0.mvt', '1/1/0.mvt', '2/2/1.mvt', '3/4/2.mvt', '3/4/3.mvt']),
    );
    expect(await stats(s.ws.id)).toMatchObject({ entries: 10, bytes: sum(files) });
    expect(job.bytes_written).toBe(sum(files));
    // What was seeded is a hit at once, for the data plane computes the same key.
    const hit = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/3/2/4');
    expect(hit.headers['geoplane-tile-cache']).toBe('hit');
    // Seeding again skips every stored tile.
    const again = await runJob(s.ws.id, { type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 3, bbox });
    expect(again).toMatchObject({ tiles_total: 5, tiles_rendered: 0, tiles_skipped: 5 });
    expect(storedTiles(s.ws.id).size).toBe(10);
  });

  it('reseed renders every tile again in place; truncate by zoom removes exactly those tiles', async () => {
    const before = storedTiles(s.ws.id);
    const reseed = await runJob(s.ws.id, {
      type: 'reseed',
      layers: ['places'],
      zoom_min: 0,
      zoom_max: 3,
      bbox,
    });
    expect(reseed).toMatchObject({ tiles_total: 5, tiles_rendered: 5, tiles_skipped: 0 });
    expect(storedTiles(s.ws.id)).toEqual(before);
    const cut = await runJob(s.ws.id, { type: 'truncate', layers: ['roads'], zoom_min: 3, zoom_max: 3 });
    const gone = [...before.keys()].filter(
      (k) => k.startsWith(`${s.ws.id}/${s.roads.id}/`) && k.split('/')[3] === '3',
    );
    expect(gone.length).toBe(2);
    expect(cut).toMatchObject({
      tiles_removed: 2,
      bytes_removed: gone.reduce((n, k) => n + (before.get(k) ?? 0), 0),
    });
    const now = storedTiles(s.ws.id);
    expect(now.size).toBe(8);
    for (const k of gone) expect(now.has(k)).toBe(false);
    expect(await stats(s.ws.id)).toMatchObject({ entries: 8, bytes: sum(now) });
    expect(
      (await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/3/2/4', withKey(s.viewer))).headers[
        'geoplane-tile-cache'
      ],
    ).toBe('miss');
    expect(
      (await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/2/1/2', withKey(s.viewer))).headers[
        'geoplane-tile-cache'
      ],
    ).toBe('hit');
  });

  it('progress, listing, cancel (If-Match, twice, finished) and one unfinished job per workspace', async () => {
    // The whole world at z0–z9: 349,525 tiles, far more than the test waits for.
    const big = await api('POST', `/workspaces/${s.ws.id}/tile-cache/jobs`, withKey(s.admin), {
      type: 'seed',
      layers: ['places'],
      zoom_min: 0,
      zoom_max: 9,
    });
    expect(big.status, big.text).toBe(202);
    expect(big.body).toMatchObject({ status: 'queued', tiles_total: 349_525, version: 1 });
    const second = await api('POST', `/workspaces/${s.ws.id}/tile-cache/jobs`, asSuperAdmin(), {
      type: 'truncate',
    });
    expectError(second, 409, 'tile_cache_job_running');
    expect(second.body.job_id ?? second.body.details?.job_id ?? JSON.stringify(second.body)).toContain(
      big.body.id,
    );
    const progress = await api(
      'GET',
      `/workspaces/${s.ws.id}/tile-cache/jobs/${big.body.id}/progress`,
      withKey(s.viewer),
    );
    expect(progress.status, progress.text).toBe(200);
    expect(progress.body).toMatchObject({ job_id: big.body.id, type: 'seed', tiles_total: 349_525 });
    expect(progress.body.tiles_done).toBeLessThan(349_525);
    const stale = await api('DELETE', `/workspaces/${s.ws.id}/tile-cache/jobs/${big.body.id}`, {
      ...asSuperAdmin(),
      'If-Match': '"999"',
    });
    expectError(stale, 412);
    expectError(
      await api('DELETE', `/workspaces/${s.ws.id}/tile-cache/jobs/${big.body.id}`, withKey(s.editor)),
      403,
    );
    const cancel = await api('DELETE', `/workspaces/${s.ws.id}/tile-cache/jobs/${big.body.id}`);
    expect(cancel.status, cancel.text).toBe(202);
    expect(cancel.body.cancel_requested).toBe(true);
    const done = await finished(s.ws.id, big.body.id);
    expect(done.body.status).toBe('cancelled');
    expect(done.body.tiles_done).toBeLessThan(349_525);
    const late = await api('DELETE', `/workspaces/${s.ws.id}/tile-cache/jobs/${big.body.id}`);
    expectError(late, 409, 'tile_cache_job_finished');
    const list = await api('GET', `/workspaces/${s.ws.id}/tile-cache/jobs?limit=100`, withKey(s.viewer));
    expect(list.status, list.text).toBe(200);
    const ids = list.body.jobs.map((j: { id: string }) => j.id);
    expect(ids).toContain(big.body.id);
    expect(ids).toEqual([...ids].sort());
    expect(list.body.jobs.every((j: Record<string, unknown>) => !('cursor' in j))).toBe(true);
    expectError(
      await api('GET', `/workspaces/${s.ws.id}/tile-cache/jobs/019a0000-0000-7000-8000-000000000000`),
      404,
    );
    expectError(
      await api(
        'GET',
        `/workspaces/${s.ws.id}/tile-cache/jobs/019a0000-0000-7000-8000-000000000000/progress`,
      ),
      404,
    );
  });

  it('an Idempotency-Key replays the answer: the same job, not a second one (and not a 409)', async () => {
    const key = `tile-job-${Date.now()}`;
    const headers = { ...asSuperAdmin(), 'Idempotency-Key': key };
    const body = { type: 'truncate', layers: ['places'], zoom_min: 20, zoom_max: 20 };
    const first = await api('POST', `/workspaces/${s.ws.id}/tile-cache/jobs`, headers, body);
    expect(first.status, first.text).toBe(202);
    const again = await api('POST', `/workspaces/${s.ws.id}/tile-cache/jobs`, headers, body);
    expect(again.status, again.text).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect((await finished(s.ws.id, first.body.id)).body.status).toBe('succeeded');
    const jobs = (await api('GET', `/workspaces/${s.ws.id}/tile-cache/jobs?limit=100`)).body.jobs;
    expect(jobs.filter((j: { id: string }) => j.id === first.body.id).length).toBe(1);
  });

  it('bad input is a clear 4xx and writes nothing', async () => {
    const jobsBefore = (await api('GET', `/workspaces/${s.ws.id}/tile-cache/jobs?limit=100`)).body.jobs
      .length;
    const post = (body: unknown, headers = asSuperAdmin()) =>
      api('POST', `/workspaces/${s.ws.id}/tile-cache/jobs`, headers, body);
    expectError(await post({}), 400);
    expectError(await post({ type: 'purge' }), 400);
    expectError(await post({ type: 'seed', layers: ['places'] }), 400, 'invalid_tile_cache_job');
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 4, zoom_max: 2 }),
      400,
      'invalid_tile_cache_job',
    );
    expectError(await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 25 }), 400);
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 2, bbox: [10, 40, 5, 50] }),
      400,
      'invalid_tile_cache_job',
    );
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 2, bbox: [0, 95, 5, 96] }),
      400,
      'invalid_tile_cache_job',
    );
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 2, bbox: [1, 2, 3] }),
      400,
    );
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 11 }),
      400,
      'invalid_tile_cache_job',
    );
    expectError(
      await post({ type: 'seed', layers: ['nope'], zoom_min: 0, zoom_max: 1 }),
      404,
      'layer_not_found',
    );
    expectError(
      await post({
        type: 'seed',
        layers: ['places'],
        zoom_min: 0,
        zoom_max: 1,
        tile_matrix_set: 'WorldCRS84Quad',
      }),
      400,
      'invalid_tile_cache_job',
    );
    expectError(await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 1, extra: 1 }), 400);
    expectError(await post({ type: 'truncate' }, withKey(s.editor)), 403);
    await changeLayer(s.ws.id, s.service.id, s.parcels, { enabled: false });
    expectError(
      await post({ type: 'seed', layers: ['parcels'], zoom_min: 0, zoom_max: 1 }),
      422,
      'layer_not_served',
    );
    await changeLayer(s.ws.id, s.service.id, s.parcels, { enabled: true });
    await setSettings(s.ws.id, 'ogc-tiles', {
      settings: { ...(await tilesSettings()), cache_enabled: false },
    });
    expectError(
      await post({ type: 'seed', layers: ['places'], zoom_min: 0, zoom_max: 1 }),
      422,
      'tile_cache_disabled',
    );
    await setSettings(s.ws.id, 'ogc-tiles', {
      settings: { ...(await tilesSettings()), cache_enabled: true },
    });
    expect((await api('GET', `/workspaces/${s.ws.id}/tile-cache/jobs?limit=100`)).body.jobs.length).toBe(
      jobsBefore,
    );
  });

  it('truncating the whole workspace removes every generation, deleted layers too, and the usage returns to zero', async () => {
    await api('POST', `/workspaces/${s.ws.id}/cache/clear`);
    await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7');
    expect(storedTiles(s.ws.id).size).toBeGreaterThan(0);
    const job = await runJob(s.ws.id, { type: 'truncate' });
    expect(job.tiles_removed).toBeGreaterThan(0);
    expect(storedTiles(s.ws.id).size).toBe(0);
    expect(await stats(s.ws.id)).toMatchObject({ entries: 0, bytes: 0 });
  });
});
