import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { currentFingerprint, type ServedLayer, tileBudgetOf } from '#domain/data-plane.ts';
import { defaultSettings } from '#domain/settings.ts';
import {
  canonicalTile,
  parseTileKey,
  tileFingerprint,
  tileIn,
  tileKey,
  tileRange,
  tilesIn,
} from '#domain/tile-cache.ts';
import { seedTileAt } from '#domain/tile-cache-jobs.ts';
import { type SweptWorkspace, sweepTiles } from '#domain/tile-cache-sweep.ts';
import { DirectoryTileStore } from '#platform/tile-store.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshStore = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tiles-'));
  dirs.push(dir);
  return new DirectoryTileStore(dir);
};
const tile = (n: number, features = 1, truncated = false) => ({
  bytes: new Uint8Array(Array.from({ length: n }, (_, i) => i % 251)),
  features,
  truncated,
});

describe('tile addresses and ranges (WebMercatorQuad)', () => {
  it('takes only canonical integer addresses inside the matrix set', () => {
    expect(canonicalTile({ z: '4', x: '7', y: '5' })).toEqual({ z: 4, x: 7, y: 5 });
    for (const bad of [
      { z: '04', x: '7', y: '5' },
      { z: '4', x: '16', y: '5' },
      { z: '25', x: '0', y: '0' },
      { z: '4', x: '-1', y: '5' },
      { z: '4', x: '../..', y: '5' },
      { z: '4', x: '7.0', y: '5' },
    ])
      expect(canonicalTile(bad), JSON.stringify(bad)).toBeUndefined();
  });

  it('covers the world at every zoom without a bbox, and the tiles a bbox touches with one', () => {
    expect(tileRange(0, undefined)).toEqual({ x0: 0, x1: 0, y0: 0, y1: 0 });
    expect(tileRange(3, undefined)).toEqual({ x0: 0, x1: 7, y0: 0, y1: 7 });
    // 0.5–22°E, 38–55°N at z3: column 4 (0–45°E), rows 2 (40.98–66.5°N) and 3 (0–40.98°N).
    expect(tileRange(3, [0.5, 38, 22, 55])).toEqual({ x0: 4, x1: 4, y0: 2, y1: 3 });
    expect(tilesIn(0, 3, [0.5, 38, 22, 55])).toBe(5);
    expect(tilesIn(0, 9, undefined)).toBe((4 ** 10 - 1) / 3);
    // Latitudes beyond Web Mercator's ±85.05° clamp to the edge rows.
    expect(tileRange(2, [-180, -90, 180, 90])).toEqual({ x0: 0, x1: 3, y0: 0, y1: 3 });
  });

  it('enumerates a seed job: every position is a distinct tile of the range, layer by layer', () => {
    const job = { zoom_min: 1, zoom_max: 4, bbox: [-10, 35, 25, 60] as [number, number, number, number] };
    const perLayer = tilesIn(job.zoom_min, job.zoom_max, job.bbox);
    const seen = new Set<string>();
    for (let p = 0; p < 2 * perLayer; p++) {
      const { layer, tile: t } = seedTileAt(job, p);
      expect(layer).toBe(p < perLayer ? 0 : 1);
      expect(tileIn(t, job.zoom_min, job.zoom_max, job.bbox)).toBe(true);
      seen.add(`${layer}/${t.z}/${t.x}/${t.y}`);
    }
    expect(seen.size).toBe(2 * perLayer);
  });

  it('a tile key carries the fingerprint of everything the bytes depend on, and reads back', () => {
    const base = { layerVersion: 3, serviceVersion: 2, workspaceGeneration: 0, tilesEpoch: 0 };
    const fp = tileFingerprint(base);
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    for (const change of [
      { layerVersion: 4 },
      { serviceVersion: 3 },
      { maxFeatures: 100 },
      { maxBytes: 1000 },
      { workspaceGeneration: 1 },
      { tilesEpoch: 1 },
    ])
      expect(tileFingerprint({ ...base, ...change }), JSON.stringify(change)).not.toBe(fp);
    const key = tileKey('ws-1', 'layer-1', fp, { z: 5, x: 17, y: 9 });
    expect(parseTileKey(key)).toEqual({
      workspaceId: 'ws-1',
      layerId: 'layer-1',
      fingerprint: fp,
      tile: { z: 5, x: 17, y: 9 },
    });
    expect(parseTileKey('ws-1/layer-1/notahex/5/17/9.mvt')).toBeUndefined();
  });
});

describe('the directory tile store', () => {
  it('stores a tile once, keeps what rendering reported, replaces with the old size, removes', async () => {
    const store = freshStore();
    const key = 'ws/layer/0123456789abcdef/3/4/2.mvt';
    expect(await store.get(key)).toBeUndefined();
    expect(await store.putNew(key, tile(100, 7, true))).toBe(true);
    expect(await store.putNew(key, tile(50))).toBe(false);
    const got = await store.get(key);
    expect(got?.bytes.byteLength).toBe(100);
    expect(got?.features).toBe(7);
    expect(got?.truncated).toBe(true);
    expect(Buffer.from(got?.bytes as Uint8Array)).toEqual(Buffer.from(tile(100).bytes));
    expect(await store.replace(key, tile(60))).toBe(100);
    expect(await store.replace('ws/layer/0123456789abcdef/3/4/3.mvt', tile(10))).toBeUndefined();
    expect((await store.list('ws/', undefined, 10)).tiles).toEqual([
      { key: 'ws/layer/0123456789abcdef/3/4/2.mvt', bytes: 60 },
      { key: 'ws/layer/0123456789abcdef/3/4/3.mvt', bytes: 10 },
    ]);
    await store.remove([key, key]);
    expect(await store.get(key)).toBeUndefined();
    await expect(store.get('../etc/passwd')).rejects.toThrow(/Not a tile store key/);
    await expect(store.putNew('/abs/1.mvt', tile(1))).rejects.toThrow(/Not a tile store key/);
  });

  it('lists every tile under a prefix exactly once across pages, in one order, and names the children', async () => {
    const store = freshStore();
    const keys: string[] = [];
    for (const ws of ['a', 'b'])
      for (const layer of ['l1', 'l2-x', 'l2'])
        for (const z of [1, 10, 2])
          for (const y of [0, 1, 11]) keys.push(`${ws}/${layer}/0123456789abcdef/${z}/3/${y}.mvt`);
    for (const k of keys) await store.putNew(k, tile(3));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list('a/', after, 4);
      seen.push(...page.tiles.map((t) => t.key));
      if (!page.next) break;
      after = page.next;
    }
    const expected = keys.filter((k) => k.startsWith('a/'));
    expect(seen.length).toBe(expected.length);
    expect(new Set(seen)).toEqual(new Set(expected));
    expect(await store.children('', 10)).toEqual(['a', 'b']);
    expect(await store.children('a/', 10)).toEqual(['l1', 'l2', 'l2-x']);
  });

  it('the sweep removes stale fingerprints, gone or unserved layers and gone workspaces, and keeps the current tiles', async () => {
    const store = freshStore();
    const tiles = structuredClone(defaultSettings['ogc-tiles']);
    const served = { layer: { id: 'l1', version: 3 }, service: { version: 2 } } as unknown as ServedLayer;
    const state = { generation: 1, tilesEpoch: 4 };
    const current = currentFingerprint(served, tileBudgetOf(tiles), state);
    const stale = currentFingerprint(
      { ...served, layer: { ...served.layer, version: 2 } },
      tileBudgetOf(tiles),
      state,
    );
    const put = async (prefix: string, n: number, size: number) => {
      for (let y = 0; y < n; y++) await store.putNew(`${prefix}/2/1/${y}.mvt`, tile(size));
    };
    await put(`kept/l1/${current}`, 3, 10);
    await put(`kept/l1/${stale}`, 2, 7);
    await put(`kept/l2/${current}`, 1, 5); // known, not served (disabled)
    await put(`kept/l3/${current}`, 1, 4); // not in the catalog
    await put(`gone/l1/${current}`, 2, 9);
    const ws = (complete: boolean): SweptWorkspace => ({
      served: new Map([['l1', served]]),
      known: new Set(['l1', 'l2']),
      complete,
      tiles,
      ...state,
    });
    // A listing that did not reach every layer: an unknown layer's tiles stay.
    const removed: [string, number, number][] = [];
    const partial = await sweepTiles(
      {
        store,
        workspace: async (id) => (id === 'kept' ? ws(false) : undefined),
        removed: async (id, e, b) => void removed.push([id, e, b]),
      },
      1000,
    );
    expect(partial).toEqual({ workspaces: 1, layers: 1, generations: 1, tiles: 5, bytes: 2 * 7 + 5 + 2 * 9 });
    expect(removed).toEqual([['kept', -3, -(2 * 7 + 5)]]);
    expect((await store.list('kept/l3/', undefined, 10)).tiles.length).toBe(1);
    const full = await sweepTiles({
      store,
      workspace: async (id) => (id === 'kept' ? ws(true) : undefined),
      removed: async () => {},
    });
    expect(full).toEqual({ workspaces: 0, layers: 1, generations: 0, tiles: 1, bytes: 4 });
    expect(await store.children('', 10)).toEqual(['kept']);
    expect(await store.children('kept/', 10)).toEqual(['l1']);
    expect((await store.list('kept/', undefined, 10)).tiles.map((t) => t.key)).toEqual(
      [0, 1, 2].map((y) => `kept/l1/${current}/2/1/${y}.mvt`),
    );
    // The limit holds: one tile a run.
    await put(`gone/l9/${current}`, 3, 1);
    expect(
      (await sweepTiles({ store, workspace: async () => undefined, removed: async () => {} }, 1)).tiles,
    ).toBe(1);
  });
});
