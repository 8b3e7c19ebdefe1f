import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeArrayBuffer } from 'geotiff';
import { afterAll, describe, expect, it } from 'vitest';
import { HarvestResultBody, MosaicBody, MosaicGranuleBody } from '#api/mosaic-schemas.ts';
import { ServiceBody } from '#api/schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { FAULT_HOST } from '../support/host-process.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A fresh directory under the host's mosaic directory for a root_uri (the local host runs on this machine). */
function tempRoot(): string {
  const dir = mosaicRoot();
  roots.push(dir);
  return dir;
}

async function createMosaic(wsId: string, root: string, name = 'mosaic') {
  const res = await call('POST', `/workspaces/${wsId}/services`, {
    headers: asSuperAdmin(),
    body: { name, type: 'raster_mosaic', connection: { root_uri: root } },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

const base = (wsId: string, svc: string) => `/workspaces/${wsId}/services/${svc}/mosaic`;

async function harvest(wsId: string, svc: string, body: unknown, headers = asSuperAdmin()) {
  return call('POST', `${base(wsId, svc)}/harvest`, { headers, body });
}

async function mosaicState(wsId: string, svc: string) {
  const res = await call('GET', base(wsId, svc), { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body as { generation: number; granule_count: number };
}

async function allGranules(wsId: string, svc: string, query = '') {
  const res = await call('GET', `${base(wsId, svc)}/granules?limit=1000${query}`, {
    headers: asSuperAdmin(),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.granules as { id: string; source_uri: string; time?: string }[];
}

/** A workspace with a mosaic over `count` granules laid side by side along x. */
async function harvestedMosaic(count: number) {
  const ws = await createWorkspace();
  const root = tempRoot();
  for (let i = 0; i < count; i++) writeTiff(root, `g${String(i).padStart(2, '0')}.tif`, i * 10, 10);
  const svc = await createMosaic(ws.id, root);
  const res = await harvest(ws.id, svc.id, {});
  expect(res.status, res.text).toBe(200);
  return { ws, svc, root, granules: res.body.added as { id: string; source_uri: string }[] };
}

describe('raster_mosaic services', () => {
  it('creates a raster_mosaic service (201) with its root_uri and no secrets', async () => {
    const ws = await createWorkspace();
    const root = tempRoot();
    const res = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'rasters', type: 'raster_mosaic', connection: { root_uri: root } },
    });
    expect(res.status, res.text).toBe(201);
    expect(ServiceBody.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      type: 'raster_mosaic',
      connection: { root_uri: root },
      configured_secrets: [],
    });
    const got = await call('GET', `/workspaces/${ws.id}/services/rasters`, { headers: asSuperAdmin() });
    expect(got.body.connection).toEqual({ root_uri: root });
    const fresh = await mosaicState(ws.id, 'rasters');
    expect(fresh).toMatchObject({ generation: 0, granule_count: 0, root_uri: root });
  });

  it('returns 400 when root_uri is not a readable directory, or not absolute', async () => {
    const ws = await createWorkspace();
    const missing = join(tempRoot(), 'nope');
    const send = (root_uri: string) =>
      call('POST', `/workspaces/${ws.id}/services`, {
        headers: asSuperAdmin(),
        body: { name: 'r', type: 'raster_mosaic', connection: { root_uri } },
      });
    expectError(await send(missing), 400, 'root_unreadable');
    expectError(await send('relative/dir'), 400);
    const withHost = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'r', type: 'raster_mosaic', connection: { root_uri: tempRoot(), host: 'x' } },
    });
    expectError(withHost, 400);
  });

  it('updates a mosaic root (200) and refuses an unreadable one (400)', async () => {
    const ws = await createWorkspace();
    const svc = await createMosaic(ws.id, tempRoot());
    const next = tempRoot();
    const put = (root_uri: string) =>
      call('PUT', `/workspaces/${ws.id}/services/${svc.id}`, {
        headers: asSuperAdmin(),
        body: { name: 'mosaic', type: 'raster_mosaic', connection: { root_uri } },
      });
    const ok = await put(next);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.connection).toEqual({ root_uri: next });
    expectError(await put(join(next, 'missing')), 400, 'root_unreadable');
  });

  it('answers 422 to the PostGIS-only operations on a mosaic', async () => {
    const ws = await createWorkspace();
    const svc = await createMosaic(ws.id, tempRoot());
    const path = `/workspaces/${ws.id}/services/${svc.id}`;
    const h = { headers: asSuperAdmin() };
    expectError(await call('POST', `${path}/discover`, h), 422, 'not_a_postgis_service');
    expectError(await call('POST', `${path}/test-connection`, h), 422, 'not_a_postgis_service');
    expectError(
      await call('POST', `${path}/validate-sql`, { ...h, body: { sql: 'SELECT 1' } }),
      422,
      'not_a_postgis_service',
    );
    for (const enabled of [true, false]) {
      expectError(
        await call('POST', `${path}/layers`, { ...h, body: { source_layer: 'x', enabled } }),
        422,
        'not_a_postgis_service',
      );
    }
  });

  it('answers 422 to the mosaic operations on a PostGIS service', async () => {
    const ws = await createWorkspace();
    const pg = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: {
        name: 'pg',
        type: 'postgis',
        enabled: false,
        connection: { host: FAULT_HOST, port: 1, database: 'd', user: 'u' },
      },
    });
    expect(pg.status, pg.text).toBe(201);
    const h = { headers: asSuperAdmin() };
    const path = base(ws.id, 'pg');
    expectError(await call('GET', path, h), 422, 'not_a_mosaic');
    expectError(await call('GET', `${path}/granules`, h), 422, 'not_a_mosaic');
    expectError(await call('GET', `${path}/granules/${crypto.randomUUID()}`, h), 422, 'not_a_mosaic');
    expectError(await call('DELETE', `${path}/granules/${crypto.randomUUID()}`, h), 422, 'not_a_mosaic');
    expectError(await harvest(ws.id, 'pg', {}), 422, 'not_a_mosaic');
  });
});

describe('harvestMosaicGranules', () => {
  it('reads every GeoTIFF header under the root as one new generation (200)', async () => {
    const ws = await createWorkspace();
    const root = tempRoot();
    writeTiff(root, 'a.tif', 0, 10);
    writeTiff(root, 'sub/b.tiff', 20, 10, 6, 4);
    writeFileSync(join(root, 'notes.txt'), 'not a raster');
    const svc = await createMosaic(ws.id, root);
    const res = await harvest(ws.id, svc.id, {});
    expect(res.status, res.text).toBe(200);
    expect(HarvestResultBody.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
    expect(res.body).toMatchObject({ generation: 1, granule_count: 2, skipped: [] });
    const b = res.body.added.find((g: { source_uri: string }) => g.source_uri.endsWith('sub/b.tiff'));
    expect(b).toMatchObject({
      source_uri: `${root}/sub/b.tiff`,
      crs: 'EPSG:4326',
      srid: 4326,
      bbox: [20, 8, 23, 10],
      width: 6,
      height: 4,
      band_count: 1,
      data_type: 'Byte',
      resolution_x: 0.5,
      resolution_y: 0.5,
      workspace_id: ws.id,
      service_id: svc.id,
    });
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 1, granule_count: 2 });
    const state = await call('GET', base(ws.id, svc.id), { headers: asSuperAdmin() });
    expect(MosaicBody.safeParse(state.body).success).toBe(true);
  });

  it('makes a harvest visible all at once: readers see the old or the new generation, never a part', async () => {
    const { ws, svc, root } = await harvestedMosaic(1);
    for (let i = 0; i < 40; i++) writeTiff(root, `more/m${i}.tif`, i, 50);
    let reading = true;
    const counts = new Set<string>();
    const reader = async () => {
      while (reading) {
        const page = await call('GET', `${base(ws.id, svc.id)}/granules?limit=1000`, {
          headers: asSuperAdmin(),
        });
        expect(page.status).toBe(200);
        counts.add(`${page.body.generation}:${page.body.granules.length}`);
      }
    };
    const readers = [reader(), reader()];
    const res = await harvest(ws.id, svc.id, { pattern: 'more/*.tif' });
    reading = false;
    await Promise.all(readers);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ generation: 2, granule_count: 41 });
    for (const c of counts) expect(['1:1', '2:41']).toContain(c);
  });

  it('skips sources already in the mosaic (ids kept) and adds new ones as the next generation', async () => {
    const { ws, svc, root, granules } = await harvestedMosaic(2);
    const again = await harvest(ws.id, svc.id, {});
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ generation: 1, granule_count: 2, added: [] });
    expect(again.body.skipped).toHaveLength(2);
    writeTiff(root, 'late.tif', 50, 10);
    const more = await harvest(ws.id, svc.id, { pattern: '*.tif' });
    expect(more.body).toMatchObject({ generation: 2, granule_count: 3 });
    expect(more.body.added.map((g: { source_uri: string }) => g.source_uri)).toEqual([`${root}/late.tif`]);
    const ids = (await allGranules(ws.id, svc.id)).map((g) => g.id);
    for (const g of granules) expect(ids).toContain(g.id);
  });

  it('takes uris relative to the root or inside it, with time and elevation', async () => {
    const ws = await createWorkspace();
    const root = tempRoot();
    writeTiff(root, 'a.tif', 0, 10);
    writeTiff(root, 'b.tif', 10, 10);
    const svc = await createMosaic(ws.id, root);
    const res = await harvest(ws.id, svc.id, {
      uris: [{ uri: 'a.tif', time: '2024-01-01T00:00:00Z', elevation: 100 }, `${root}/b.tif`],
    });
    expect(res.status, res.text).toBe(200);
    const a = res.body.added.find((g: { source_uri: string }) => g.source_uri.endsWith('a.tif'));
    expect(a).toMatchObject({ time: '2024-01-01T00:00:00.000Z', elevation: 100 });
  });

  it('fails with 422 and changes nothing when one source is unreadable or missing', async () => {
    const { ws, svc, root } = await harvestedMosaic(1);
    writeTiff(root, 'good.tif', 30, 10);
    writeFileSync(join(root, 'broken.tif'), 'II*\u0000 this is not a tiff at all');
    // A valid TIFF cut after its first bytes: the IFD it points at is gone.
    const whole = Buffer.from(writeArrayBuffer([1, 2, 3, 4], { width: 2, height: 2 }));
    writeFileSync(join(root, 'truncated.tif'), whole.subarray(0, 16));
    const all = await harvest(ws.id, svc.id, {});
    expectError(all, 422, 'unreadable_source');
    expectError(
      await harvest(ws.id, svc.id, { uris: ['good.tif', 'truncated.tif'] }),
      422,
      'unreadable_source',
    );
    expectError(
      await harvest(ws.id, svc.id, { uris: ['good.tif', 'missing.tif'] }),
      422,
      'unreadable_source',
    );
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 1, granule_count: 1 });
    expect(await allGranules(ws.id, svc.id)).toHaveLength(1);
  });

  it('returns 422 when the pattern matches nothing', async () => {
    const { ws, svc } = await harvestedMosaic(1);
    expectError(await harvest(ws.id, svc.id, { pattern: '*.jp2' }), 422, 'no_sources');
  });

  it('returns 400 for sources outside the root, ".." paths and patterns, both uris and pattern', async () => {
    const { ws, svc, root } = await harvestedMosaic(1);
    const outside = tempRoot();
    writeTiff(outside, 'x.tif', 0, 0);
    for (const uri of [
      '../x.tif',
      'sub/../../x.tif',
      `${outside}/x.tif`,
      '/etc/passwd',
      `${root}-evil/x.tif`,
    ]) {
      expectError(await harvest(ws.id, svc.id, { uris: [uri] }), 400, 'source_outside_root');
    }
    expectError(await harvest(ws.id, svc.id, { pattern: '../*.tif' }), 400, 'invalid_pattern');
    expectError(await harvest(ws.id, svc.id, { pattern: '/etc/*' }), 400, 'invalid_pattern');
    expectError(
      await harvest(ws.id, svc.id, { uris: ['g00.tif'], pattern: '*.tif' }),
      400,
      'uris_and_pattern',
    );
    expectError(await harvest(ws.id, svc.id, { uris: [], extra: 1 }), 400);
    // A symlink inside the root that leads out of it is not followed.
    symlinkSync(join(outside, 'x.tif'), join(root, 'link.tif'));
    expectError(await harvest(ws.id, svc.id, { uris: ['link.tif'] }), 422, 'unreadable_source');
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 1, granule_count: 1 });
  });

  it('returns 400 beyond 90 new granules per harvest', async () => {
    const ws = await createWorkspace();
    const root = tempRoot();
    for (let i = 0; i < 91; i++) writeFileSync(join(root, `t${i}.tif`), 'x');
    const svc = await createMosaic(ws.id, root);
    expectError(await harvest(ws.id, svc.id, {}), 400, 'too_many_sources');
    const uris = Array.from({ length: 91 }, (_, i) => `t${i}.tif`);
    expectError(await harvest(ws.id, svc.id, { uris }), 400);
  });

  it('returns 404 for an unknown service or workspace', async () => {
    const ws = await createWorkspace();
    expectError(await harvest(ws.id, 'nope', {}), 404, 'service_not_found');
    expectError(await call('GET', base(uniqueName(), 'x'), { headers: asSuperAdmin() }), 404);
  });
});

describe('listMosaicGranules and getMosaicGranule', () => {
  it('lists the active generation with bbox and time filters and cursor paging', async () => {
    const ws = await createWorkspace();
    const root = tempRoot();
    writeTiff(root, 'a.tif', 0, 10);
    writeTiff(root, 'b.tif', 10, 10);
    writeTiff(root, 'c.tif', 20, 10);
    const svc = await createMosaic(ws.id, root);
    const res = await harvest(ws.id, svc.id, {
      uris: [
        { uri: 'a.tif', time: '2024-01-01T00:00:00Z' },
        { uri: 'b.tif', time: '2024-06-01T00:00:00Z' },
        'c.tif',
      ],
    });
    expect(res.status, res.text).toBe(200);
    const list = await call('GET', `${base(ws.id, svc.id)}/granules`, { headers: asSuperAdmin() });
    expect(list.status).toBe(200);
    expect(list.body.generation).toBe(1);
    expect(list.body.granules).toHaveLength(3);
    for (const g of list.body.granules) expect(MosaicGranuleBody.safeParse(g).success).toBe(true);
    const names = (gs: { source_uri: string }[]) => gs.map((g) => g.source_uri.slice(root.length + 1)).sort();
    expect(names(await allGranules(ws.id, svc.id, '&bbox=11,8,12,9'))).toEqual(['b.tif']);
    expect(names(await allGranules(ws.id, svc.id, '&bbox=1,8,11,9'))).toEqual(['a.tif', 'b.tif']);
    expect(names(await allGranules(ws.id, svc.id, '&bbox=100,0,101,1'))).toEqual([]);
    expect(names(await allGranules(ws.id, svc.id, '&time=2024-06-01T00:00:00Z'))).toEqual(['b.tif']);
    expect(
      names(await allGranules(ws.id, svc.id, '&time=2023-12-01T00:00:00Z/2024-02-01T00:00:00Z')),
    ).toEqual(['a.tif']);
    expect(names(await allGranules(ws.id, svc.id, '&time=2024-02-01T00:00:00Z/..'))).toEqual(['b.tif']);
    // Paging: one at a time until no next_cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(
        'GET',
        `${base(ws.id, svc.id)}/granules?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: asSuperAdmin() },
      );
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.granules.map((g: { id: string }) => g.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(list.body.granules.map((g: { id: string }) => g.id).sort());
  });

  it.each([
    ['bbox=1,2,3', 'invalid_filter'],
    ['bbox=3,0,1,1', 'invalid_filter'],
    ['bbox=a,b,c,d', 'invalid_filter'],
    ['time=yesterday', 'invalid_filter'],
    ['time=2024-02-01T00:00:00Z/2024-01-01T00:00:00Z', 'invalid_filter'],
    ['limit=0', undefined],
    ['cursor=bm90LWEtY3Vyc29y', 'invalid_cursor'],
    ['unknown=1', undefined],
  ])('returns 400 for %s', async (query, reason) => {
    const { ws, svc } = await harvestedMosaic(1);
    expectError(
      await call('GET', `${base(ws.id, svc.id)}/granules?${query}`, { headers: asSuperAdmin() }),
      400,
      reason,
    );
  });

  it('reads a granule (200), 404 for an unknown one or one removed from the active generation', async () => {
    const { ws, svc, granules } = await harvestedMosaic(2);
    const [first, second] = granules as unknown as [{ id: string }, { id: string }];
    const got = await call('GET', `${base(ws.id, svc.id)}/granules/${first.id}`, { headers: asSuperAdmin() });
    expect(got.status).toBe(200);
    expect(MosaicGranuleBody.safeParse(got.body).success).toBe(true);
    expect(got.body.id).toBe(first.id);
    expectError(
      await call('GET', `${base(ws.id, svc.id)}/granules/${crypto.randomUUID()}`, {
        headers: asSuperAdmin(),
      }),
      404,
      'granule_not_found',
    );
    expectError(
      await call('GET', `${base(ws.id, svc.id)}/granules/not-a-granule`, { headers: asSuperAdmin() }),
      404,
      'granule_not_found',
    );
    const del = await call('DELETE', `${base(ws.id, svc.id)}/granules/${second.id}`, {
      headers: asSuperAdmin(),
    });
    expect(del.status, del.text).toBe(204);
    expectError(
      await call('GET', `${base(ws.id, svc.id)}/granules/${second.id}`, { headers: asSuperAdmin() }),
      404,
      'granule_not_found',
    );
  });
});

describe('deleteMosaicGranule', () => {
  it('removes a granule as generation N+1 (204); the others keep their ids', async () => {
    const { ws, svc, granules } = await harvestedMosaic(3);
    const [gone, ...kept] = granules as unknown as [{ id: string }, ...{ id: string }[]];
    const res = await call('DELETE', `${base(ws.id, svc.id)}/granules/${gone.id}`, {
      headers: asSuperAdmin(),
    });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 2, granule_count: 2 });
    expect((await allGranules(ws.id, svc.id)).map((g) => g.id).sort()).toEqual(kept.map((g) => g.id).sort());
    // A second removal of the same granule: it is no longer in the active generation.
    expectError(
      await call('DELETE', `${base(ws.id, svc.id)}/granules/${gone.id}`, { headers: asSuperAdmin() }),
      404,
      'granule_not_found',
    );
    // A removed source can be harvested again, as a new granule.
    const again = await harvest(ws.id, svc.id, {});
    expect(again.body).toMatchObject({ generation: 3, granule_count: 3 });
    expect(again.body.added[0].id).not.toBe(gone.id);
  });

  it('returns 404 for an unknown granule, service or workspace', async () => {
    const { ws, svc } = await harvestedMosaic(2);
    const h = { headers: asSuperAdmin() };
    expectError(
      await call('DELETE', `${base(ws.id, svc.id)}/granules/${crypto.randomUUID()}`, h),
      404,
      'granule_not_found',
    );
    expectError(
      await call('DELETE', `${base(ws.id, 'nope')}/granules/${crypto.randomUUID()}`, h),
      404,
      'service_not_found',
    );
    expectError(await call('DELETE', `${base(uniqueName(), 'nope')}/granules/x`, h), 404);
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 1, granule_count: 2 });
  });

  it('returns 422 for the last granule and changes nothing', async () => {
    const { ws, svc, granules } = await harvestedMosaic(1);
    const res = await call('DELETE', `${base(ws.id, svc.id)}/granules/${granules[0]?.id}`, {
      headers: asSuperAdmin(),
    });
    expectError(res, 422, 'last_granule');
    expect(await mosaicState(ws.id, svc.id)).toMatchObject({ generation: 1, granule_count: 1 });
    expect(await allGranules(ws.id, svc.id)).toHaveLength(1);
  });

  it('10 concurrent removals from a 10-granule mosaic: exactly 9 succeed, 1 gets 422, 9 generations', async () => {
    const { ws, svc, granules } = await harvestedMosaic(10);
    const before = await mosaicState(ws.id, svc.id);
    // Readers running alongside always see a whole generation: count = 10 - (generation - before).
    let reading = true;
    const reads: Promise<void>[] = [];
    const reader = async () => {
      while (reading) {
        const page = await call('GET', `${base(ws.id, svc.id)}/granules?limit=1000`, {
          headers: asSuperAdmin(),
        });
        expect(page.status).toBe(200);
        expect(page.body.granules).toHaveLength(10 - (page.body.generation - before.generation));
      }
    };
    reads.push(reader(), reader());
    const results = await Promise.all(
      granules.map((g) =>
        call('DELETE', `${base(ws.id, svc.id)}/granules/${g.id}`, { headers: asSuperAdmin() }),
      ),
    );
    reading = false;
    await Promise.all(reads);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([204, 204, 204, 204, 204, 204, 204, 204, 204, 422]);
    const refused = results.find((r) => r.status === 422);
    expectError(refused as NonNullable<typeof refused>, 422, 'last_granule');
    expect(await mosaicState(ws.id, svc.id)).toEqual(
      expect.objectContaining({ generation: before.generation + 9, granule_count: 1 }),
    );
    expect(await allGranules(ws.id, svc.id)).toHaveLength(1);
  });
});

describe('mosaic permissions', () => {
  it('lets viewers read, editors harvest and remove; others get 403', async () => {
    const { ws, svc, root, granules } = await harvestedMosaic(3);
    const viewer = withKey((await createKey(ws.id, 'viewer')).key);
    const editor = withKey((await createKey(ws.id, 'editor')).key);
    const path = base(ws.id, svc.id);
    const [one, two] = granules as unknown as [{ id: string }, { id: string }];
    expect((await call('GET', path, { headers: viewer })).status).toBe(200);
    expect((await call('GET', `${path}/granules`, { headers: viewer })).status).toBe(200);
    expect((await call('GET', `${path}/granules/${one.id}`, { headers: viewer })).status).toBe(200);
    expectError(await harvest(ws.id, svc.id, {}, viewer), 403);
    expectError(await call('DELETE', `${path}/granules/${one.id}`, { headers: viewer }), 403);
    writeTiff(root, 'editor.tif', 90, 10);
    const harvested = await harvest(ws.id, svc.id, {}, editor);
    expect(harvested.status, harvested.text).toBe(200);
    expect((await call('DELETE', `${path}/granules/${two.id}`, { headers: editor })).status).toBe(204);
    // A key of another workspace: 403 whether or not the mosaic exists (no existence leak).
    const other = await createWorkspace();
    const stranger = withKey((await createKey(other.id, 'admin')).key);
    expectError(await call('GET', path, { headers: stranger }), 403);
    expectError(await call('DELETE', `${path}/granules/${one.id}`, { headers: stranger }), 403);
    expectError(await call('GET', path, {}), 401);
  });
});

describeCommonStatuses('mosaics', [
  {
    operationId: 'harvestMosaicGranules',
    method: 'POST',
    path: '/workspaces/{ws}/services/m/mosaic/harvest',
    body: {},
  },
  {
    operationId: 'deleteMosaicGranule',
    method: 'DELETE',
    path: `/workspaces/{ws}/services/m/mosaic/granules/${crypto.randomUUID()}`,
  },
]);
