import { describe, expect, it } from 'vitest';
import { TileMatrixSetSummary } from '#api/tile-matrix-set-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

/*
 * listWorkspaceRoles and listWorkspaceTileMatrixSets (issue #26, ADR 0131): the roles a workspace
 * may assign, and the tile matrix sets its Tiles settings enable.
 */

const builtIns = ['admin', 'editor', 'viewer'].map((id) => ({
  id,
  name: id,
  is_system: true,
  assignable_to: ['api_keys', 'claim_mappings'],
}));

async function createRole(id = uniqueName('role').toLowerCase()) {
  const res = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id, name: `Role ${id}` } });
  expect(res.status, res.text).toBe(201);
  return id;
}

/** Every page of the workspace's roles, following next_cursor. */
async function allRoles(ws: string, limit: number, headers = asSuperAdmin()) {
  const pages: { roles: { id: string }[]; next_cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const q = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await call('GET', `/workspaces/${ws}/roles?${q}`, { headers });
    expect(res.status, res.text).toBe(200);
    pages.push(res.body);
    cursor = res.body.next_cursor;
  } while (cursor && pages.length < 200);
  return pages;
}

describe('listWorkspaceRoles (GET /workspaces/{workspace}/roles)', () => {
  it('lists admin, editor and viewer first (never super_admin), then the active custom roles', async () => {
    const ws = await createWorkspace();
    const role = await createRole();
    const retired = await createRole();
    expect((await call('DELETE', `/roles/${retired}`, { headers: asSuperAdmin() })).status).toBe(204);
    const pages = await allRoles(ws.name, 1000);
    const roles = pages.flatMap((p) => p.roles) as Record<string, unknown>[];
    expect(roles.slice(0, 3)).toEqual(builtIns);
    expect(roles.map((r) => r.id)).not.toContain('super_admin');
    expect(roles.map((r) => r.id)).not.toContain(retired);
    const custom = roles.find((r) => r.id === role);
    expect(custom).toMatchObject({
      id: role,
      name: `Role ${role}`,
      is_system: false,
      version: 1,
      assignable_to: ['claim_mappings'],
    });
    expect(roles.slice(3).every((r) => r.is_system === false)).toBe(true);
  });

  it('pages the custom roles: built-ins on the first page only, every role once', async () => {
    const ws = await createWorkspace();
    await createRole();
    await createRole();
    const pages = await allRoles(ws.id, 1);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages[0]?.roles.slice(0, 3).map((r) => r.id)).toEqual(['admin', 'editor', 'viewer']);
    expect(pages[0]?.roles).toHaveLength(4);
    for (const page of pages.slice(1)) {
      expect(page.roles.length).toBeLessThanOrEqual(1);
      expect(page.roles.map((r) => r.id)).not.toContain('admin');
    }
    const ids = pages.flatMap((p) => p.roles.map((r) => r.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('returns 400 for a bad limit or cursor, and 404 for an unknown workspace', async () => {
    const ws = await createWorkspace();
    for (const q of ['limit=0', 'limit=1001', 'limit=x', 'cursor=not-a-cursor']) {
      expectError(await call('GET', `/workspaces/${ws.id}/roles?${q}`, { headers: asSuperAdmin() }), 400);
    }
    expectError(await call('GET', `/workspaces/${uniqueName()}/roles`, { headers: asSuperAdmin() }), 404);
  });

  it('answers its admin 200 and, like listClaimMappings, editors, viewers and other workspaces’ admins 403', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const res = await call('GET', `/workspaces/${ws.id}/roles`, { headers: withKey(admin.key) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.roles.slice(0, 3)).toEqual(builtIns);
    for (const key of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      const sibling = await call('GET', `/workspaces/${ws.id}/claim-mappings`, { headers: withKey(key.key) });
      const refused = await call('GET', `/workspaces/${ws.id}/roles`, { headers: withKey(key.key) });
      expectError(refused, 403);
      expect(refused.status).toBe(sibling.status);
    }
    expectError(await call('GET', `/workspaces/${ws.id}/roles`), 401);
  });
});

function definition(id: string) {
  return {
    id,
    title: `Set ${id}`,
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    tileMatrices: [0, 1].map((z) => ({
      id: String(z),
      scaleDenominator: 559082264.0287178 / 2 ** z,
      cellSize: 156543.03392804097 / 2 ** z,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [-20037508.3427892, 20037508.3427892],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 2 ** z,
      matrixHeight: 2 ** z,
    })),
  };
}

describe('listWorkspaceTileMatrixSets (GET /workspaces/{workspace}/tile-matrix-sets)', () => {
  it('lists the defaults’ two built-ins for a workspace that never saved its Tiles settings', async () => {
    const ws = await createWorkspace();
    const res = await call('GET', `/workspaces/${ws.name}/tile-matrix-sets`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.tiles_enabled).toBe(false);
    expect(res.body.tile_matrix_sets.map((s: { id: string }) => s.id)).toEqual([
      'WebMercatorQuad',
      'WorldCRS84Quad',
    ]);
    for (const s of res.body.tile_matrix_sets) {
      expect(TileMatrixSetSummary.safeParse(s).success).toBe(true);
      expect(s.built_in).toBe(true);
    }
  });

  it('lists exactly the sets the saved settings name, custom ones included, in their order', async () => {
    const ws = await createWorkspace();
    const id = uniqueName('tms');
    const created = await call('PUT', `/tile-matrix-sets/${id}`, {
      headers: asSuperAdmin(),
      body: definition(id),
    });
    expect(created.status, created.text).toBe(201);
    const saved = await call('PUT', `/workspaces/${ws.id}/settings/ogc-tiles`, {
      headers: asSuperAdmin(),
      body: {
        enabled: true,
        settings: {
          tile_matrix_sets: [id, 'WebMercatorQuad'],
          vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
          map_tiles: { enabled: false },
          cache_enabled: true,
        },
      },
    });
    expect(saved.status, saved.text).toBe(200);
    const res = await call('GET', `/workspaces/${ws.id}/tile-matrix-sets`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      tiles_enabled: true,
      tile_matrix_sets: [
        { id, title: `Set ${id}`, crs: 'http://www.opengis.net/def/crs/EPSG/0/3857', built_in: false },
        expect.objectContaining({ id: 'WebMercatorQuad', built_in: true }),
      ],
    });
    // The global list agrees on the custom set's summary.
    const global = await call('GET', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    expect(global.status).toBe(200);
  });

  it('answers viewers, editors and admins 200 (read, like getOGCTilesAPISettings) and other workspaces 403', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const key = await createKey(ws.id, role);
      const res = await call('GET', `/workspaces/${ws.id}/tile-matrix-sets`, { headers: withKey(key.key) });
      expect(res.status, `${role}: ${res.text}`).toBe(200);
    }
    const stranger = await createKey(other.id, 'admin');
    const sibling = await call('GET', `/workspaces/${ws.id}/settings/ogc-tiles`, {
      headers: withKey(stranger.key),
    });
    const refused = await call('GET', `/workspaces/${ws.id}/tile-matrix-sets`, {
      headers: withKey(stranger.key),
    });
    expectError(refused, 403);
    expect(refused.status).toBe(sibling.status);
    expectError(await call('GET', `/workspaces/${ws.id}/tile-matrix-sets`), 401);
  });

  it('returns 404 for an unknown or malformed workspace, as getOGCTilesAPISettings does', async () => {
    for (const name of [uniqueName(), encodeURIComponent('no spaces!')]) {
      const sibling = await call('GET', `/workspaces/${name}/settings/ogc-tiles`, {
        headers: asSuperAdmin(),
      });
      const res = await call('GET', `/workspaces/${name}/tile-matrix-sets`, { headers: asSuperAdmin() });
      expectError(res, 404, 'workspace_not_found');
      expect(res.status).toBe(sibling.status);
    }
  });
});
