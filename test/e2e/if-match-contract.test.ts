import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { type ApiResponse, asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { importsOf, pointsGeoJson } from '../support/imports.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';

/**
 * The If-Match contract over THE route table (ADR 0087): every operation that declares If-Match
 * (every PUT and DELETE: the OpenAPI generator adds the header to each) answers a stale value with
 * 412 and the standard error body and changes nothing; the current ETag then succeeds. The list of
 * operations is the route table's, so a new PUT/DELETE without a fixture here fails the run.
 */
const declaresIfMatch = (op: Operation) => op.method === 'PUT' || op.method === 'DELETE';

/** Operations not covered here, with where they are. */
const pendingElsewhere: Readonly<Record<string, string>> = {
  // Its target must stay running through the stale and the current request: a 349,525-tile job.
  cancelTileCacheJob: 'test/e2e/tile-cache.test.ts (412 on a stale If-Match, then 202 on a running job)',
  // Its target must stay running through the stale and the current request: a 10,000-file job.
  cancelMosaicHarvestJob:
    'test/e2e/mosaic-harvest-jobs.test.ts (412 on a stale If-Match, then 202 on a running job)',
};

/** One target of an operation: its path parameters, its current ETag, the body a PUT sends, how to read it. */
interface Target {
  params: Record<string, string>;
  etag: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The target as it is now (compared before and after the stale request). */
  read(): Promise<unknown>;
}

const su = asSuperAdmin;
let postgis: Record<string, unknown>;
const roots: string[] = [];

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

async function ok(res: Promise<ApiResponse>, status = [200, 201]): Promise<ApiResponse> {
  const got = await res;
  expect(status, `${got.status} ${got.text}`).toContain(got.status);
  return got;
}

/** The ETag of a GET, and a reader that returns status, ETag and body. */
async function readable(path: string) {
  const read = async () => {
    const res = await call('GET', path, { headers: su() });
    return { status: res.status, etag: res.headers.etag, body: res.raw?.toString('base64') };
  };
  const first = await ok(call('GET', path, { headers: su() }), [200]);
  expect(first.headers.etag, `GET ${path} answers an ETag`).toMatch(/^"[^"]+"$/);
  return { etag: first.headers.etag as string, read };
}

/** An item of a list, found by id (for resources without a GET of their own). */
const listed = (path: string, key: string, id: string) => async () => {
  const res = await call('GET', path, { headers: su() });
  return (res.body[key] as { id: string }[]).find((i) => i.id === id) ?? null;
};

async function service(wsId: string, name = 'pg') {
  const res = await ok(
    call('POST', `/workspaces/${wsId}/services`, {
      headers: su(),
      body: { name, type: 'postgis', connection: postgis },
    }),
  );
  return res.body as { id: string; name: string };
}

async function layer(wsId: string, serviceId: string, sourceLayer = 'roads') {
  const res = await ok(
    call('POST', `/workspaces/${wsId}/services/${serviceId}/layers`, {
      headers: su(),
      body: { source_layer: sourceLayer },
    }),
  );
  return res.body as { id: string; public_id: string };
}

async function group(wsId: string) {
  const svc = await service(wsId);
  const l = await layer(wsId, svc.id);
  const res = await ok(
    call('POST', `/workspaces/${wsId}/layer-groups`, {
      headers: su(),
      body: { public_id: uniqueName('grp'), members: [{ resource: l.public_id }] },
    }),
  );
  return res.body as { id: string; public_id: string; members: unknown };
}

const mapbox = { version: 8, sources: {}, layers: [] };
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

function tileMatrixSet(id: string, title = 'a set') {
  return {
    id,
    title,
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
  };
}

async function settingsTarget(kind: string, body: unknown): Promise<Target> {
  const ws = await createWorkspace();
  return { params: { workspace: ws.id }, body, ...(await readable(`/workspaces/${ws.id}/settings/${kind}`)) };
}

/** How to make a target of each operation that declares If-Match. */
/** An import of a small GeoJSON upload, staged and ready to publish. */
async function stagedImport(wsId: string) {
  const imports = importsOf(wsId);
  const job = await imports.uploaded(pointsGeoJson(3), 'tag.geojson');
  const ready = await imports.until(job.id, ['ready_to_publish']);
  expect(ready.body.status).toBe('ready_to_publish');
  return { job: ready.body, path: `/workspaces/${wsId}/imports/${job.id}` };
}

const fixtures: Record<string, () => Promise<Target>> = {
  async cancelImport() {
    const ws = await createWorkspace();
    const { job, path } = await stagedImport(ws.id);
    return { params: { workspace: ws.id, import: job.id }, ...(await readable(path)) };
  },
  async setImportPlan() {
    const ws = await createWorkspace();
    const { job, path } = await stagedImport(ws.id);
    const plan = { layers: [{ ...job.plan.layers[0], title: 'retitled' }] };
    return { params: { workspace: ws.id, import: job.id }, body: plan, ...(await readable(path)) };
  },
  async updateWorkspace() {
    const ws = await createWorkspace();
    return {
      params: { workspace: ws.id },
      body: { description: 'changed' },
      ...(await readable(`/workspaces/${ws.id}`)),
    };
  },
  async deleteWorkspace() {
    const ws = await createWorkspace();
    return { params: { workspace: ws.id }, ...(await readable(`/workspaces/${ws.id}`)) };
  },
  async revokeAPIKey() {
    const ws = await createWorkspace();
    const key = await ok(
      call('POST', `/workspaces/${ws.id}/apikeys`, { headers: su(), body: { name: 'k', role_id: 'viewer' } }),
    );
    return {
      params: { workspace: ws.id, keyId: key.body.id },
      ...(await readable(`/workspaces/${ws.id}/apikeys/${key.body.id}`)),
    };
  },
  async deleteAPIKey() {
    const ws = await createWorkspace();
    const key = await ok(
      call('POST', `/workspaces/${ws.id}/apikeys`, { headers: su(), body: { name: 'k', role_id: 'viewer' } }),
    );
    // Only a revoked key is deleted for good.
    await ok(call('DELETE', `/workspaces/${ws.id}/apikeys/${key.body.id}`, { headers: su() }), [204]);
    return {
      params: { workspace: ws.id, keyId: key.body.id },
      ...(await readable(`/workspaces/${ws.id}/apikeys/${key.body.id}`)),
    };
  },
  async revokeBrowserSession() {
    const ws = await createWorkspace();
    const key = await ok(
      call('POST', `/workspaces/${ws.id}/apikeys`, { headers: su(), body: { name: 'k', role_id: 'viewer' } }),
    );
    const login = await ok(call('POST', '/auth/login', { body: { token: key.body.key } }), [201]);
    const cookie = login.cookies.map((c) => c.split(';')[0]).join('; ');
    return {
      params: { session: login.body.session_id },
      // A session's version is 1 until its first refresh (its listing's `version`).
      etag: '"1"',
      // The session as its own cookie finds it: usable (200, its id) until revoked (401).
      read: async () => {
        const me = await call('GET', '/auth/me', { headers: { Cookie: cookie } });
        return { status: me.status, session: me.body?.session_id ?? null };
      },
    };
  },
  async deleteRole() {
    const id = uniqueName('role').replaceAll('-', '_');
    await ok(call('POST', '/roles', { headers: su(), body: { id, name: id } }));
    return { params: { roleId: id }, ...(await readable(`/roles/${id}`)) };
  },
  async removeRolePolicy() {
    const id = uniqueName('role').replaceAll('-', '_');
    await ok(call('POST', '/roles', { headers: su(), body: { id, name: id } }));
    const added = await ok(
      call('POST', `/roles/${id}/policies`, {
        headers: su(),
        body: { workspace: '*', service: 'wms', operation: 'GetMap', action: 'read' },
      }),
    );
    const policyId = (added.headers.location as string).split('/').pop() as string;
    return {
      params: { roleId: id, policyId },
      etag: added.headers.etag as string,
      read: listed(`/roles/${id}/policies`, 'policies', policyId),
    };
  },
  async deleteClaimMapping() {
    const ws = await createWorkspace();
    const res = await ok(
      call('POST', `/workspaces/${ws.id}/claim-mappings`, {
        headers: su(),
        body: { claim_name: 'groups', claim_value: uniqueName('g'), role_id: 'viewer' },
      }),
    );
    return {
      params: { workspace: ws.id, mappingId: res.body.id },
      etag: res.headers.etag as string,
      read: listed(`/workspaces/${ws.id}/claim-mappings`, 'claim_mappings', res.body.id),
    };
  },
  async deleteGlobalClaimMapping() {
    const res = await ok(
      call('POST', '/claim-mappings', {
        headers: su(),
        body: { claim_name: 'groups', claim_value: uniqueName('g'), role_id: 'viewer' },
      }),
    );
    return {
      params: { mappingId: res.body.id },
      etag: res.headers.etag as string,
      read: async () => {
        // The global list may be long: page through it.
        for (let cursor = ''; ; ) {
          const page = await call('GET', `/claim-mappings?limit=1000${cursor}`, { headers: su() });
          const found = (page.body.claim_mappings as { id: string }[]).find((m) => m.id === res.body.id);
          if (found) return found;
          if (!page.body.next_cursor) return null;
          cursor = `&cursor=${encodeURIComponent(page.body.next_cursor)}`;
        }
      },
    };
  },
  async updateService() {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    return {
      params: { workspace: ws.id, service: svc.id },
      body: { name: 'pg-renamed', type: 'postgis', connection: postgis },
      ...(await readable(`/workspaces/${ws.id}/services/${svc.id}`)),
    };
  },
  async deleteService() {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    return {
      params: { workspace: ws.id, service: svc.id },
      ...(await readable(`/workspaces/${ws.id}/services/${svc.id}`)),
    };
  },
  async updateLayer() {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const l = await layer(ws.id, svc.id);
    return {
      params: { workspace: ws.id, service: svc.id, layer: l.id },
      body: { source_layer: 'roads', title: 'changed' },
      ...(await readable(`/workspaces/${ws.id}/services/${svc.id}/layers/${l.id}`)),
    };
  },
  async deleteLayer() {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const l = await layer(ws.id, svc.id);
    return {
      params: { workspace: ws.id, service: svc.id, layer: l.id },
      ...(await readable(`/workspaces/${ws.id}/services/${svc.id}/layers/${l.id}`)),
    };
  },
  async updateLayerGroup() {
    const ws = await createWorkspace();
    const g = await group(ws.id);
    return {
      params: { workspace: ws.id, group: g.id },
      body: { public_id: g.public_id, title: 'changed', members: g.members },
      ...(await readable(`/workspaces/${ws.id}/layer-groups/${g.id}`)),
    };
  },
  async deleteLayerGroup() {
    const ws = await createWorkspace();
    const g = await group(ws.id);
    return {
      params: { workspace: ws.id, group: g.id },
      ...(await readable(`/workspaces/${ws.id}/layer-groups/${g.id}`)),
    };
  },
  async deleteMosaicGranule() {
    const ws = await createWorkspace();
    const root = mosaicRoot();
    roots.push(root);
    writeTiff(root, 'a.tif', 0, 10);
    writeTiff(root, 'b.tif', 10, 10);
    const svc = await ok(
      call('POST', `/workspaces/${ws.id}/services`, {
        headers: su(),
        body: { name: 'm', type: 'raster_mosaic', connection: { root_uri: root } },
      }),
    );
    const harvested = await ok(
      call('POST', `/workspaces/${ws.id}/services/${svc.body.id}/mosaic/harvest`, {
        headers: su(),
        body: {},
      }),
      [200],
    );
    const granule = (harvested.body.added as { id: string }[])[0]?.id as string;
    return {
      params: { workspace: ws.id, service: svc.body.id, granule },
      ...(await readable(`/workspaces/${ws.id}/services/${svc.body.id}/mosaic/granules/${granule}`)),
    };
  },
  updateWMSSettings: () => settingsTarget('wms', { enabled: true, title: 'Maps', max_width: 2048 }),
  updateOGCAPISettings: () =>
    settingsTarget('ogcapi', { enabled: false, public: true, limit_default: 50, limit_max: 500 }),
  updateWFSSettings: () => settingsTarget('wfs', { enabled: true, title: 'Features', max_features: 500 }),
  updateWCSSettings: () => settingsTarget('wcs', { enabled: true, output_formats: ['image/tiff'] }),
  updateWMTSSettings: () =>
    settingsTarget('wmts', { enabled: true, provider_site: 'https://gis.example.org/' }),
  updateOGCTilesAPISettings: () =>
    settingsTarget('ogc-tiles', {
      enabled: true,
      settings: {
        tile_matrix_sets: ['WorldCRS84Quad'],
        vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
        map_tiles: { enabled: false },
        cache_enabled: true,
      },
    }),
  async putTileMatrixSet() {
    const id = uniqueName('tms');
    await ok(call('PUT', `/tile-matrix-sets/${id}`, { headers: su(), body: tileMatrixSet(id) }));
    return {
      params: { tileMatrixSet: id },
      body: tileMatrixSet(id, 'changed'),
      ...(await readable(`/tile-matrix-sets/${id}`)),
    };
  },
  async deleteTileMatrixSet() {
    const id = uniqueName('tms');
    await ok(call('PUT', `/tile-matrix-sets/${id}`, { headers: su(), body: tileMatrixSet(id) }));
    return { params: { tileMatrixSet: id }, ...(await readable(`/tile-matrix-sets/${id}`)) };
  },
  async updateStyle() {
    const ws = await createWorkspace();
    await ok(
      call('POST', `/workspaces/${ws.id}/styles`, {
        headers: su(),
        body: { name: 'st', format: 'mapbox', body: mapbox },
      }),
    );
    return {
      params: { workspace: ws.id, style: 'st' },
      body: { name: 'st', format: 'mapbox', body: mapbox, title: 'changed' },
      ...(await readable(`/workspaces/${ws.id}/styles/st`)),
    };
  },
  async deleteStyle() {
    const ws = await createWorkspace();
    await ok(
      call('POST', `/workspaces/${ws.id}/styles`, {
        headers: su(),
        body: { name: 'st', format: 'mapbox', body: mapbox },
      }),
    );
    return {
      params: { workspace: ws.id, style: 'st' },
      ...(await readable(`/workspaces/${ws.id}/styles/st`)),
    };
  },
  async putStyleAsset() {
    const ws = await createWorkspace();
    await ok(
      call('PUT', `/workspaces/${ws.id}/style-assets/icon`, {
        headers: { ...su(), 'Content-Type': 'image/png' },
        body: PNG,
      }),
    );
    return {
      params: { workspace: ws.id, asset: 'icon' },
      body: GIF,
      headers: { 'Content-Type': 'image/gif' },
      ...(await readable(`/workspaces/${ws.id}/style-assets/icon`)),
    };
  },
  async deleteStyleAsset() {
    const ws = await createWorkspace();
    await ok(
      call('PUT', `/workspaces/${ws.id}/style-assets/icon`, {
        headers: { ...su(), 'Content-Type': 'image/png' },
        body: PNG,
      }),
    );
    return {
      params: { workspace: ws.id, asset: 'icon' },
      ...(await readable(`/workspaces/${ws.id}/style-assets/icon`)),
    };
  },
};

const declaring = routes.filter(declaresIfMatch);

/** The route's path under /api/v1 with its parameters filled in. */
const pathOf = (op: Operation, params: Record<string, string>) =>
  op.path
    .replace(/^\/api\/v1/, '')
    .replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] as string));

describe('If-Match over the route table (ADR 0087)', () => {
  it('covers every operation that declares If-Match, and only those', () => {
    const ids = declaring.map((op) => op.operationId);
    const missing = ids.filter((id) => !fixtures[id] && !pendingElsewhere[id]);
    expect(missing, 'operations that declare If-Match without a fixture here').toEqual([]);
    expect(Object.keys(fixtures).filter((id) => !ids.includes(id))).toEqual([]);
    expect(Object.keys(pendingElsewhere).filter((id) => !ids.includes(id))).toEqual([]);
  });

  describe.each(declaring.map((op) => [op.operationId, op] as const))('%s', (operationId, op) => {
    const fixture = fixtures[operationId];
    it.skipIf(!fixture)(
      'answers a stale If-Match with 412 and changes nothing; the current ETag succeeds',
      async () => {
        // Prepare
        const target = await (fixture as () => Promise<Target>)();
        const path = pathOf(op, target.params);
        const before = await target.read();
        const send = (ifMatch: string) =>
          call(op.method, path, {
            headers: { ...su(), ...target.headers, 'If-Match': ifMatch },
            ...(target.body === undefined ? {} : { body: target.body }),
          });
        // Act
        const stale = await send('"999999"');
        // Assess: 412 with the standard body, the target as it was.
        expectError(stale, 412, 'version_mismatch');
        expect(await target.read()).toEqual(before);
        const current = await send(target.etag);
        expect([200, 201, 202, 204], `${current.status} ${current.text}`).toContain(current.status);
        expect(await target.read()).not.toEqual(before);
      },
      60_000,
    );
  });
});
