import { describe, expect, it } from 'vitest';
import { TileMatrixSetRecord, TileMatrixSetSummary } from '#api/tile-matrix-set-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

function definition(id: string, levels = 2, extra: Record<string, unknown> = {}) {
  return {
    id,
    title: `Set ${id}`,
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    tileMatrices: Array.from({ length: levels }, (_, z) => ({
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
    ...extra,
  };
}

const put = (id: string, body: unknown, headers: Record<string, string> = asSuperAdmin()) =>
  call('PUT', `/tile-matrix-sets/${id}`, { headers, body });

const tilesSettings = (sets: string[]) => ({
  enabled: true,
  settings: {
    tile_matrix_sets: sets,
    vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
    map_tiles: { enabled: false },
    cache_enabled: true,
  },
});

describe('putTileMatrixSet', () => {
  it('creates a set (201, revision 1, digest, Location) and replaces it (200, revision 2, new digest)', async () => {
    // Prepare
    const id = uniqueName('tms');
    // Act
    const created = await put(id, definition(id));
    const replaced = await put(id, definition(id, 3));
    const same = await put(id, definition(id, 3));
    // Assess
    expect(created.status, created.text).toBe(201);
    expect(TileMatrixSetRecord.safeParse(created.body).success).toBe(true);
    expect(created.body).toMatchObject({ id, built_in: false, revision: 1 });
    expect(created.body.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(created.headers.location).toBe(`/api/v1/tile-matrix-sets/${id}`);
    expect(created.headers.etag).toBe('"1"');
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.revision).toBe(2);
    expect(replaced.body.digest).not.toBe(created.body.digest);
    expect(replaced.body.definition.tileMatrices).toHaveLength(3);
    expect(replaced.body.created_at).toBe(created.body.created_at);
    expect(same.body.digest).toBe(replaced.body.digest);
  });

  it('computes the digest over canonical JSON: key order does not matter', async () => {
    const a = uniqueName('tms');
    const b = uniqueName('tms');
    const def = definition(a);
    const reordered = Object.fromEntries(Object.entries({ ...definition(a), id: a }).reverse());
    const first = await put(a, def);
    await call('DELETE', `/tile-matrix-sets/${a}`, { headers: asSuperAdmin() });
    const second = await put(a, reordered);
    expect(first.body.digest).toBe(second.body.digest);
    expect((await put(b, definition(b))).body.digest).not.toBe(first.body.digest);
  });

  it.each([
    ['an id that differs from the path', (id: string) => definition(`${id}-other`), 400, 'id_mismatch'],
    ['no tile matrices', (id: string) => ({ ...definition(id), tileMatrices: [] }), 400, 'validation_failed'],
    ['65 tile matrices', (id: string) => definition(id, 65), 400, 'validation_failed'],
    [
      'a zero tile size',
      (id: string) => {
        const d = definition(id);
        d.tileMatrices[0] = { ...(d.tileMatrices[0] as object), tileWidth: 0 } as never;
        return d;
      },
      400,
      'validation_failed',
    ],
    [
      'a negative cell size',
      (id: string) => {
        const d = definition(id);
        d.tileMatrices[0] = { ...(d.tileMatrices[0] as object), cellSize: -1 } as never;
        return d;
      },
      400,
      'validation_failed',
    ],
    ['an unknown field', (id: string) => definition(id, 1, { colour: 'red' }), 400, 'validation_failed'],
    ['no CRS', (id: string) => ({ ...definition(id), crs: undefined }), 400, 'validation_failed'],
    ['an unknown CRS', (id: string) => definition(id, 1, { crs: 'EPSG:3857' }), 422, 'unknown_crs'],
    [
      'duplicate tile matrix ids',
      (id: string) => {
        const d = definition(id, 2);
        (d.tileMatrices[1] as { id: string }).id = '0';
        return d;
      },
      422,
      'duplicate_tile_matrix',
    ],
  ])('refuses %s (%i %s) and stores nothing', async (_what, make, status, reason) => {
    const id = uniqueName('bad');
    expectError(await put(id, make(id)), status, reason);
    expectError(await call('GET', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }), 404);
  });

  it('accepts a CRS given as {uri} and an OGC CRS84 set', async () => {
    const id = uniqueName('crs84');
    const res = await put(
      id,
      definition(id, 1, { crs: { uri: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' } }),
    );
    expect(res.status, res.text).toBe(201);
  });

  it.each(['WebMercatorQuad', 'WorldCRS84Quad'])('refuses to replace the built-in %s (409)', async (id) => {
    expectError(await put(id, definition(id)), 409, 'built_in_tile_matrix_set');
  });

  it('honours If-Match: 412 on a stale revision, 200 on the current one', async () => {
    const id = uniqueName('tms');
    await put(id, definition(id));
    expectError(
      await put(id, definition(id, 2), { ...asSuperAdmin(), 'If-Match': '"9"' }),
      412,
      'version_mismatch',
    );
    expect((await put(id, definition(id, 2), { ...asSuperAdmin(), 'If-Match': '"1"' })).status).toBe(200);
  });

  it('is super_admin only (403 to a workspace admin, 401 without credentials)', async () => {
    const admin = await createKey((await createWorkspace()).id, 'admin');
    const id = uniqueName('tms');
    expectError(await put(id, definition(id), withKey(admin.key)), 403);
    expectError(await put(id, definition(id), {}), 401, 'unauthenticated');
  });
});

describe('getTileMatrixSet and listTileMatrixSets', () => {
  it('reads built-ins and custom sets; any authenticated caller may read (ADR 0051)', async () => {
    const id = uniqueName('tms');
    await put(id, definition(id));
    const viewer = await createKey((await createWorkspace()).id, 'viewer');
    const builtIn = await call('GET', '/tile-matrix-sets/WebMercatorQuad', { headers: withKey(viewer.key) });
    const custom = await call('GET', `/tile-matrix-sets/${id}`, { headers: withKey(viewer.key) });
    expect(builtIn.status).toBe(200);
    expect(builtIn.body).toMatchObject({ id: 'WebMercatorQuad', built_in: true, revision: 0 });
    expect(builtIn.body.definition.tileMatrices).toHaveLength(25);
    expect(TileMatrixSetRecord.safeParse(builtIn.body).success).toBe(true);
    expect(custom.body).toMatchObject({ id, built_in: false, revision: 1 });
    expect(custom.headers.etag).toBe('"1"');
    expectError(await call('GET', `/tile-matrix-sets/${id}`), 401, 'unauthenticated');
  });

  it('answers 404 for an unknown set', async () => {
    expectError(
      await call('GET', `/tile-matrix-sets/${uniqueName('none')}`, { headers: asSuperAdmin() }),
      404,
      'tile_matrix_set_not_found',
    );
  });

  it('lists built-ins first, then custom sets page by page', async () => {
    await put(uniqueName('tms'), definition('x')).catch(() => undefined);
    const ids = [uniqueName('list'), uniqueName('list')];
    for (const id of ids) await put(id, definition(id));
    const first = await call('GET', '/tile-matrix-sets?limit=1', { headers: asSuperAdmin() });
    expect(first.status).toBe(200);
    expect(first.body.tile_matrix_sets.slice(0, 2).map((s: { id: string }) => s.id)).toEqual([
      'WebMercatorQuad',
      'WorldCRS84Quad',
    ]);
    expect(first.body.tile_matrix_sets).toHaveLength(3);
    for (const s of first.body.tile_matrix_sets) expect(TileMatrixSetSummary.safeParse(s).success).toBe(true);
    expect(first.body.next_cursor).toBeDefined();
    const seen: string[] = [];
    let cursor: string | undefined = first.body.next_cursor;
    while (cursor) {
      const page = await call('GET', `/tile-matrix-sets?limit=50&cursor=${encodeURIComponent(cursor)}`, {
        headers: asSuperAdmin(),
      });
      expect(page.status).toBe(200);
      expect(page.body.tile_matrix_sets.some((s: { built_in: boolean }) => s.built_in)).toBe(false);
      seen.push(...page.body.tile_matrix_sets.map((s: { id: string }) => s.id));
      cursor = page.body.next_cursor;
    }
    const all = [first.body.tile_matrix_sets[2].id, ...seen];
    for (const id of ids) expect(all).toContain(id);
    expectError(
      await call('GET', '/tile-matrix-sets?cursor=bogus', { headers: asSuperAdmin() }),
      400,
      'invalid_cursor',
    );
    expectError(await call('GET', '/tile-matrix-sets?limit=0', { headers: asSuperAdmin() }), 400);
  });
});

describe('deleteTileMatrixSet', () => {
  it('deletes an unreferenced custom set (204); then it is 404', async () => {
    const id = uniqueName('tms');
    await put(id, definition(id));
    const res = await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('GET', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }), 404);
    expectError(
      await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }),
      404,
      'tile_matrix_set_not_found',
    );
  });

  it.each(['WebMercatorQuad', 'WorldCRS84Quad'])('refuses to delete the built-in %s (409)', async (id) => {
    expectError(
      await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }),
      409,
      'built_in_tile_matrix_set',
    );
  });

  it('refuses a set named by workspaces’ tiles settings (409 naming every one), allows it once released', async () => {
    // Prepare
    const id = uniqueName('tms');
    await put(id, definition(id));
    const a = await createWorkspace();
    const b = await createWorkspace();
    for (const ws of [a, b]) {
      const res = await call('PUT', `/workspaces/${ws.id}/settings/ogc-tiles`, {
        headers: asSuperAdmin(),
        body: tilesSettings([id]),
      });
      expect(res.status, res.text).toBe(200);
    }
    // Act
    const refused = await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    // Assess
    expectError(refused, 409, 'tile_matrix_set_referenced');
    expect(refused.body.detail).toContain(a.name);
    expect(refused.body.detail).toContain(b.name);
    // Replacing a referenced set is allowed; it stays referenced.
    expect((await put(id, definition(id, 4))).status).toBe(200);
    for (const ws of [a, b]) {
      await call('PUT', `/workspaces/${ws.id}/settings/ogc-tiles`, {
        headers: asSuperAdmin(),
        body: tilesSettings(['WebMercatorQuad']),
      });
    }
    expect((await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() })).status).toBe(204);
  });

  it('releases the references of a deleted workspace: its saved settings go with it', async () => {
    // Prepare
    const id = uniqueName('tms');
    await put(id, definition(id));
    const ws = await createWorkspace();
    const saved = await call('PUT', `/workspaces/${ws.id}/settings/ogc-tiles`, {
      headers: asSuperAdmin(),
      body: tilesSettings([id]),
    });
    expect(saved.status, saved.text).toBe(200);
    expectError(await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }), 409);
    // Act
    const deleted = await call('DELETE', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    // Assess
    expect(deleted.status, deleted.text).toBe(204);
    expect((await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() })).status).toBe(204);
  });

  it('never loses a reference racing with a delete: either the delete or the settings save fails', async () => {
    for (let round = 0; round < 5; round++) {
      const id = uniqueName('race');
      await put(id, definition(id));
      const ws = await createWorkspace();
      const [save, del] = await Promise.all([
        call('PUT', `/workspaces/${ws.id}/settings/ogc-tiles`, {
          headers: asSuperAdmin(),
          body: tilesSettings([id]),
        }),
        call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }),
      ]);
      // Both succeeding would leave settings that name a set that no longer exists.
      expect(save.status === 200 && del.status === 204, `${save.status} ${del.status}`).toBe(false);
      if (save.status === 200) expect(del.status).toBe(409);
      else expectError(save, 400, 'unknown_tile_matrix_set');
    }
  });

  it('honours If-Match (412) and is super_admin only (403)', async () => {
    const id = uniqueName('tms');
    await put(id, definition(id));
    const admin = await createKey((await createWorkspace()).id, 'admin');
    expectError(await call('DELETE', `/tile-matrix-sets/${id}`, { headers: withKey(admin.key) }), 403);
    expectError(await call('DELETE', `/tile-matrix-sets/${id}`), 401);
    expectError(
      await call('DELETE', `/tile-matrix-sets/${id}`, { headers: { ...asSuperAdmin(), 'If-Match': '"2"' } }),
      412,
      'version_mismatch',
    );
    expect(
      (await call('DELETE', `/tile-matrix-sets/${id}`, { headers: { ...asSuperAdmin(), 'If-Match': '"1"' } }))
        .status,
    ).toBe(204);
  });
});

describeCommonStatuses('tile matrix sets', [
  { operationId: 'listTileMatrixSets', method: 'GET', path: '/tile-matrix-sets' },
  { operationId: 'getTileMatrixSet', method: 'GET', path: '/tile-matrix-sets/common-probe' },
  {
    operationId: 'putTileMatrixSet',
    method: 'PUT',
    path: '/tile-matrix-sets/common-probe',
    body: definition('common-probe'),
  },
  { operationId: 'deleteTileMatrixSet', method: 'DELETE', path: '/tile-matrix-sets/common-probe' },
]);
