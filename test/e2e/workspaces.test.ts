import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deleteWorkspace as deleteWorkspaceOperation } from '#api/operations/workspaces.ts';
import { Workspace } from '#api/schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';

describe('createWorkspace', () => {
  it('returns 201 with the workspace, ETag and Location', async () => {
    const name = uniqueName();
    const res = await call('POST', '/workspaces', {
      headers: asSuperAdmin(),
      body: { name, description: 'd' },
    });
    expect(res.status).toBe(201);
    expect(Workspace.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ name, description: 'd', version: 1 });
    expect(res.headers.etag).toBe('"1"');
    expect(res.headers.location).toBe(`/api/v1/workspaces/${res.body.id}`);
  });

  it('returns 409 for a duplicate name', async () => {
    const ws = await createWorkspace();
    const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name: ws.name } });
    expectError(res, 409, 'workspace_name_taken');
  });

  it.each([['bad name'], ['-starts-with-dash'], [''], ['x'.repeat(65)], ['ümlaut']])(
    'returns 400 for the name %j',
    async (name) => {
      const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name } });
      expectError(res, 400, 'validation_failed');
      expect(res.body.issues[0].path).toBe('body.name');
    },
  );

  it('gives exactly one 201 among 20 concurrent creates of one name', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });

  it('returns 403 for a workspace admin key', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const res = await call('POST', '/workspaces', {
      headers: withKey(admin.key),
      body: { name: uniqueName() },
    });
    expectError(res, 403, 'super_admin_required');
  });
});

describe('updateWorkspace', () => {
  it('keeps the description when omitted or null and clears it with ""', async () => {
    const ws = await createWorkspace(uniqueName(), 'keep me');
    const omitted = await call('PUT', `/workspaces/${ws.id}`, { headers: asSuperAdmin(), body: {} });
    expect(omitted.status).toBe(200);
    expect(omitted.body.description).toBe('keep me');
    const nulled = await call('PUT', `/workspaces/${ws.id}`, {
      headers: asSuperAdmin(),
      body: { description: null },
    });
    expect(nulled.body.description).toBe('keep me');
    const cleared = await call('PUT', `/workspaces/${ws.id}`, {
      headers: asSuperAdmin(),
      body: { description: '' },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('description');
    expect(cleared.body.version).toBe(4);
  });

  it('returns 409 on a duplicate name and changes neither workspace', async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const res = await call('PUT', `/workspaces/${a.id}`, { headers: asSuperAdmin(), body: { name: b.name } });
    expectError(res, 409, 'workspace_name_taken');
    const readA = await call('GET', `/workspaces/${a.id}`, { headers: asSuperAdmin() });
    const readB = await call('GET', `/workspaces/${b.name}`, { headers: asSuperAdmin() });
    expect(readA.body).toMatchObject({ name: a.name, version: 1 });
    expect(readB.body).toMatchObject({ id: b.id, version: 1 });
  });

  it('renames, frees the old name and resolves the new one', async () => {
    const ws = await createWorkspace();
    const newName = uniqueName('renamed');
    const res = await call('PUT', `/workspaces/${ws.name}`, {
      headers: asSuperAdmin(),
      body: { name: newName },
    });
    expect(res.status).toBe(200);
    expect((await call('GET', `/workspaces/${newName}`, { headers: asSuperAdmin() })).body.id).toBe(ws.id);
    expectError(await call('GET', `/workspaces/${ws.name}`, { headers: asSuperAdmin() }), 404);
    const reuse = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name: ws.name } });
    expect(reuse.status).toBe(201);
  });

  it('returns 412 when If-Match is stale and 200 when it matches', async () => {
    const ws = await createWorkspace();
    const stale = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"7"' },
      body: { description: 'x' },
    });
    expectError(stale, 412, 'version_mismatch');
    const fresh = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { description: 'x' },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.etag).toBe('"2"');
  });

  it('lets the workspace admin update and refuses editor and viewer with 403', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const editor = await createKey(ws.id, 'editor');
    const viewer = await createKey(ws.id, 'viewer');
    const body = { description: 'by admin' };
    expect((await call('PUT', `/workspaces/${ws.id}`, { headers: withKey(admin.key), body })).status).toBe(
      200,
    );
    expectError(await call('PUT', `/workspaces/${ws.id}`, { headers: withKey(editor.key), body }), 403);
    expectError(await call('PUT', `/workspaces/${ws.id}`, { headers: withKey(viewer.key), body }), 403);
  });

  it('returns 404 to super_admin and 403 to another workspace admin for an unknown workspace', async () => {
    const other = await createWorkspace();
    const admin = await createKey(other.id, 'admin');
    const missing = uniqueName('missing');
    expectError(await call('PUT', `/workspaces/${missing}`, { headers: asSuperAdmin(), body: {} }), 404);
    expectError(await call('PUT', `/workspaces/${missing}`, { headers: withKey(admin.key), body: {} }), 403);
  });

  it.each([
    ['malformed JSON', '{"name":', 'malformed_json'],
    ['an unknown field', JSON.stringify({ nme: 'x' }), 'validation_failed'],
    ['a wrong type', JSON.stringify({ description: 5 }), 'validation_failed'],
    ['a bad name', JSON.stringify({ name: 'a b' }), 'validation_failed'],
  ])('returns 400 for %s and writes nothing', async (_case, body, reason) => {
    const ws = await createWorkspace();
    expectError(await call('PUT', `/workspaces/${ws.id}`, { headers: asSuperAdmin(), body }), 400, reason);
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() })).body.version).toBe(1);
  });
});

describe('getWorkspace, listWorkspaces and deleteWorkspace', () => {
  it('reads by id and by name; viewers may read', async () => {
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    const byName = await call('GET', `/workspaces/${ws.name}`, { headers: withKey(viewer.key) });
    expect(byName.status).toBe(200);
    expect(byName.body.id).toBe(ws.id);
    expect(byName.headers.etag).toBe('"1"');
  });

  it('pages through every workspace with the cursor', async () => {
    const created = [await createWorkspace(), await createWorkspace(), await createWorkspace()];
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const q = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const res = await call('GET', `/workspaces${q}`, { headers: asSuperAdmin() });
      expect(res.status).toBe(200);
      expect(res.body.workspaces.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.workspaces.map((w: { id: string }) => w.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 1000);
    for (const ws of created) expect(seen).toContain(ws.id);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it.each([['?limit=0'], ['?limit=1001'], ['?limit=abc'], ['?cursor=not-a-cursor'], ['?other=1']])(
    'returns 400 for %s',
    async (q) => {
      expectError(await call('GET', `/workspaces${q}`, { headers: asSuperAdmin() }), 400);
    },
  );

  it('deletes an empty workspace (204) with its API keys, then 404', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'admin');
    const res = await call('DELETE', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() }), 404);
    expectError(await call('GET', `/auth/me`, { headers: withKey(key.key) }), 401);
  });

  it('refuses deletion by a workspace admin (403)', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expectError(await call('DELETE', `/workspaces/${ws.id}`, { headers: withKey(admin.key) }), 403);
  });
});

describe('deleteWorkspace without recurse on a workspace that is not empty (ADR 0087)', () => {
  it('answers 409 with the body its schema declares, every count taken from the one plan', async () => {
    // Prepare: catalog items (two services, a layer, a style, a style asset) and side items.
    const ws = await createWorkspace();
    const root = mosaicRoot();
    try {
      writeTiff(root, 'a.tif', 0, 10);
      for (const body of [
        { name: 'm1', type: 'raster_mosaic', connection: { root_uri: root } },
        { name: 'm2', type: 'raster_mosaic', connection: { root_uri: root } },
      ]) {
        const res = await call('POST', `/workspaces/${ws.id}/services`, { headers: asSuperAdmin(), body });
        expect(res.status, res.text).toBe(201);
      }
      const harvested = await call('POST', `/workspaces/${ws.id}/services/m1/mosaic/harvest`, {
        headers: asSuperAdmin(),
        body: {},
      });
      expect(harvested.status, harvested.text).toBe(200);
      const style = await call('POST', `/workspaces/${ws.id}/styles`, {
        headers: asSuperAdmin(),
        body: { name: 'st', format: 'mapbox', body: { version: 8, sources: {}, layers: [] } },
      });
      expect(style.status, style.text).toBe(201);
      await createKey(ws.id, 'viewer');
      await createKey(ws.id, 'editor');
      // Act
      const res = await call('DELETE', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
      // Assess: the documented schema (no field it forbids) and one account of the contents.
      expectError(res, 409, 'workspace_not_empty');
      const schema = deleteWorkspaceOperation.responses[409]?.schema;
      const parsed = schema?.safeParse(res.body);
      expect(parsed?.success, JSON.stringify(parsed?.error?.issues)).toBe(true);
      expect(res.body).not.toHaveProperty('dependents');
      const { plan } = res.body;
      expect(res.body.recurse_required).toBe(true);
      expect(plan.workspace_items).toMatchObject({ services: 2, styles: 1, api_keys: 2 });
      expect(plan.mosaic_granules).toBe(1);
      const catalog =
        plan.workspace_items.services +
        plan.workspace_items.styles +
        (plan.workspace_items.style_assets ?? 0) +
        plan.layers.count +
        plan.layer_groups.count +
        plan.mosaic_granules;
      expect(res.body.detail).toContain(`still holds ${catalog} catalog item(s)`);
      expect(res.body.detail).toContain('2 service(s)');
      expect(res.body.detail).toContain('1 mosaic granule record(s)');
      const everything = Object.values(plan.workspace_items as Record<string, number>).reduce(
        (a, b) => a + b,
        0,
      );
      expect(plan.total).toBe(
        everything + plan.layers.count + plan.layer_groups.count + plan.mosaic_granules + 1,
      );
      // Nothing was deleted.
      expect(
        (await call('GET', `/workspaces/${ws.id}/services/m2`, { headers: asSuperAdmin() })).status,
      ).toBe(200);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
