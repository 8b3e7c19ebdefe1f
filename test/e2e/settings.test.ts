import { describe, expect, it } from 'vitest';
import { OGCAPISettingsSchema, OGCTilesSettingsSchema, WMSSettingsSchema } from '#api/settings-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

const tiles = (tileMatrixSets: string[], extra: Record<string, unknown> = {}) => ({
  enabled: true,
  settings: {
    tile_matrix_sets: tileMatrixSets,
    vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
    map_tiles: { enabled: true, formats: ['image/png'] },
    cache_enabled: false,
  },
  ...extra,
});

const docs = {
  wms: { enabled: true, title: 'Maps', max_width: 2048, extensions: ['z-order', 'compositing'] },
  ogcapi: { enabled: false, public: true, limit_default: 50, limit_max: 500 },
  'ogc-tiles': tiles(['WorldCRS84Quad']),
} as const;

async function customSet(id = uniqueName('tms')) {
  const res = await call('PUT', `/tile-matrix-sets/${id}`, {
    headers: asSuperAdmin(),
    body: {
      id,
      crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
      tileMatrices: [
        {
          id: '0',
          scaleDenominator: 559082264.0287178,
          cellSize: 156543.03392804097,
          pointOfOrigin: [-20037508.3427892, 20037508.3427892],
          tileWidth: 256,
          tileHeight: 256,
          matrixWidth: 1,
          matrixHeight: 1,
        },
      ],
    },
  });
  expect(res.status, res.text).toBe(201);
  return id;
}

describe('settings defaults', () => {
  it('returns the defaults of a fresh workspace with ETag "0" (viewer may read)', async () => {
    // Prepare
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    // Act
    const [wms, ogcapi, ogcTiles] = await Promise.all(
      ['wms', 'ogcapi', 'ogc-tiles'].map((k) =>
        call('GET', `/workspaces/${ws.name}/settings/${k}`, { headers: withKey(viewer.key) }),
      ),
    );
    // Assess
    expect(wms?.status).toBe(200);
    expect(wms?.body).toEqual({ enabled: false, public: false });
    expect(wms?.headers.etag).toBe('"0"');
    expect(ogcapi?.body).toEqual({ enabled: true, public: false });
    expect(ogcTiles?.body).toEqual({
      enabled: false,
      public: false,
      versions: ['1.0.0'],
      settings: {
        tile_matrix_sets: ['WebMercatorQuad', 'WorldCRS84Quad'],
        vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
        map_tiles: { enabled: true, formats: ['image/png', 'image/jpeg', 'image/webp'] },
        cache_enabled: true,
      },
    });
    expect(WMSSettingsSchema.safeParse(wms?.body).success).toBe(true);
    expect(OGCAPISettingsSchema.safeParse(ogcapi?.body).success).toBe(true);
    expect(OGCTilesSettingsSchema.safeParse(ogcTiles?.body).success).toBe(true);
  });
});

describe.each(['wms', 'ogcapi', 'ogc-tiles'] as const)('%s settings', (kind) => {
  it('replaces the whole document (200), bumps the ETag, and GET returns it', async () => {
    // Prepare
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    // Act
    const put = await call('PUT', `/workspaces/${ws.id}/settings/${kind}`, {
      headers: withKey(admin.key),
      body: docs[kind],
    });
    const again = await call('PUT', `/workspaces/${ws.id}/settings/${kind}`, {
      headers: withKey(admin.key),
      body: {
        enabled: kind === 'ogcapi',
        ...(kind === 'ogc-tiles' ? { settings: tiles([]).settings } : {}),
      },
    });
    const get = await call('GET', `/workspaces/${ws.id}/settings/${kind}`, { headers: withKey(admin.key) });
    // Assess
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject(docs[kind]);
    expect(put.headers.etag).toBe('"1"');
    expect(again.status, again.text).toBe(200);
    expect(again.headers.etag).toBe('"2"');
    // Fields left out of a PUT are gone: it is a replacement, not a merge.
    expect(get.body).toEqual(again.body);
    expect(get.body).not.toHaveProperty('title');
    expect(get.body.public).toBe(false);
    expect(get.headers.etag).toBe('"2"');
  });

  it('answers 412 when If-Match does not match and changes nothing; a matching If-Match succeeds', async () => {
    const ws = await createWorkspace();
    const path = `/workspaces/${ws.id}/settings/${kind}`;
    const stale = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"7"' },
      body: docs[kind],
    });
    expectError(stale, 412, 'version_mismatch');
    expect((await call('GET', path, { headers: asSuperAdmin() })).headers.etag).toBe('"0"');
    const fresh = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"0"' },
      body: docs[kind],
    });
    expect(fresh.status, fresh.text).toBe(200);
  });

  it('answers 404 for an unknown workspace (super_admin) and 403 to a caller without a role there', async () => {
    const path = `/workspaces/${uniqueName('missing')}/settings/${kind}`;
    expectError(await call('GET', path, { headers: asSuperAdmin() }), 404, 'workspace_not_found');
    expectError(
      await call('PUT', path, { headers: asSuperAdmin(), body: docs[kind] }),
      404,
      'workspace_not_found',
    );
    const other = await createKey((await createWorkspace()).id, 'admin');
    expectError(await call('GET', path, { headers: withKey(other.key) }), 403);
  });

  it('answers 401 without a credential, 403 to an editor on PUT, 400 for an unknown field or malformed JSON', async () => {
    const ws = await createWorkspace();
    const path = `/workspaces/${ws.id}/settings/${kind}`;
    expectError(await call('GET', path), 401, 'unauthenticated');
    expectError(await call('PUT', path, { body: docs[kind] }), 401, 'unauthenticated');
    const editor = await createKey(ws.id, 'editor');
    expectError(await call('PUT', path, { headers: withKey(editor.key), body: docs[kind] }), 403);
    expect((await call('GET', path, { headers: withKey(editor.key) })).status).toBe(200);
    const unknown = await call('PUT', path, {
      headers: asSuperAdmin(),
      body: { ...docs[kind], surprise: 1 },
    });
    expectError(unknown, 400, 'validation_failed');
    expectError(
      await call('PUT', path, { headers: asSuperAdmin(), body: '{"enabled":' }),
      400,
      'malformed_json',
    );
    expectError(await call('PUT', path, { headers: asSuperAdmin(), body: {} }), 400, 'validation_failed');
  });
});

describe('settings validation (400)', () => {
  it.each([
    ['wms', { enabled: true, max_width: 0 }, 'validation_failed'],
    ['wms', { enabled: true, max_width: 4097 }, 'limit_exceeds_ceiling'],
    ['wms', { enabled: true, max_render_vertices: 5_000_001 }, 'limit_exceeds_ceiling'],
    ['wms', { enabled: true, extensions: ['teleport'] }, 'validation_failed'],
    ['wms', { enabled: true, extensions: ['z-order', 'z-order'] }, 'duplicate_extension'],
    ['ogcapi', { enabled: true, limit_max: -1 }, 'validation_failed'],
    ['ogcapi', { enabled: true, limit_max: 10_001 }, 'limit_exceeds_ceiling'],
    ['ogcapi', { enabled: true, limit_default: 100, limit_max: 10 }, 'limit_default_above_max'],
    ['ogc-tiles', tiles(['NoSuchSet']), 'unknown_tile_matrix_set'],
    ['ogc-tiles', tiles(['WebMercatorQuad', 'WebMercatorQuad']), 'duplicate_value'],
    ['ogc-tiles', tiles([]), 'tile_matrix_sets_required'],
    ['ogc-tiles', { ...tiles(['WebMercatorQuad']), versions: ['2.0.0'] }, 'validation_failed'],
    [
      'ogc-tiles',
      {
        ...tiles(['WebMercatorQuad']),
        settings: {
          ...tiles([]).settings,
          tile_matrix_sets: ['WebMercatorQuad'],
          map_tiles: { enabled: true, formats: [] },
        },
      },
      'map_tile_formats_required',
    ],
    [
      'ogc-tiles',
      {
        ...tiles(['WebMercatorQuad']),
        settings: {
          ...tiles([]).settings,
          tile_matrix_sets: ['WebMercatorQuad'],
          max_tile_bytes: 10 * 1024 * 1024 + 1,
        },
      },
      'limit_exceeds_ceiling',
    ],
  ] as const)('refuses %s %j with 400 %s and keeps the stored document', async (kind, body, reason) => {
    const ws = await createWorkspace();
    const path = `/workspaces/${ws.id}/settings/${kind}`;
    expectError(await call('PUT', path, { headers: asSuperAdmin(), body }), 400, reason);
    expect((await call('GET', path, { headers: asSuperAdmin() })).headers.etag).toBe('"0"');
  });
});

describe('tiles settings and custom tile matrix sets', () => {
  it('accepts an existing custom set and records the reference, so deleting the set is refused until it is dropped', async () => {
    // Prepare
    const id = await customSet();
    const ws = await createWorkspace();
    const path = `/workspaces/${ws.id}/settings/ogc-tiles`;
    // Act
    const put = await call('PUT', path, { headers: asSuperAdmin(), body: tiles(['WebMercatorQuad', id]) });
    const refused = await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    const dropped = await call('PUT', path, { headers: asSuperAdmin(), body: tiles(['WebMercatorQuad']) });
    const deleted = await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    // Assess
    expect(put.status, put.text).toBe(200);
    expect(put.body.settings.tile_matrix_sets).toEqual(['WebMercatorQuad', id]);
    expectError(refused, 409, 'tile_matrix_set_referenced');
    expect(refused.body.detail).toContain(ws.name);
    expect(dropped.status).toBe(200);
    expect(deleted.status).toBe(204);
  });

  it('keeps the reference count exact under concurrent saves of the same workspace', async () => {
    const id = await customSet();
    const ws = await createWorkspace();
    const path = `/workspaces/${ws.id}/settings/ogc-tiles`;
    const bodies = Array.from({ length: 6 }, (_, i) => tiles(i % 2 ? [id] : ['WebMercatorQuad']));
    const results = await Promise.all(
      bodies.map((body) => call('PUT', path, { headers: asSuperAdmin(), body })),
    );
    for (const r of results) expect([200, 409]).toContain(r.status);
    const final = await call('GET', path, { headers: asSuperAdmin() });
    const referenced = final.body.settings.tile_matrix_sets.includes(id);
    const del = await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    expect(del.status).toBe(referenced ? 409 : 204);
    if (referenced) {
      await call('PUT', path, { headers: asSuperAdmin(), body: tiles(['WebMercatorQuad']) });
      expect((await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() })).status).toBe(204);
    }
  });
});

describeCommonStatuses('settings', [
  { operationId: 'getWMSSettings', method: 'GET', path: '/workspaces/{ws}/settings/wms' },
  { operationId: 'updateWMSSettings', method: 'PUT', path: '/workspaces/{ws}/settings/wms', body: docs.wms },
  { operationId: 'getOGCAPISettings', method: 'GET', path: '/workspaces/{ws}/settings/ogcapi' },
  {
    operationId: 'updateOGCAPISettings',
    method: 'PUT',
    path: '/workspaces/{ws}/settings/ogcapi',
    body: docs.ogcapi,
  },
  { operationId: 'getOGCTilesAPISettings', method: 'GET', path: '/workspaces/{ws}/settings/ogc-tiles' },
  {
    operationId: 'updateOGCTilesAPISettings',
    method: 'PUT',
    path: '/workspaces/{ws}/settings/ogc-tiles',
    body: docs['ogc-tiles'],
  },
]);
