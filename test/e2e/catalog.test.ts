import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { LayerBody, LayerGroupBody, ServiceBody, ValidateSQLResponse } from '#api/schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { FAULT_HOST } from '../support/host-process.ts';
import { hostDynamo } from '../support/store.ts';

/** The embedded PostGIS of the shared test host (written by its bootstrap). */
let postgis: { host: string; port: number; database: string; user: string; password?: string };

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

async function workspaceWithService() {
  const ws = await createWorkspace();
  const res = await call('POST', `/workspaces/${ws.id}/services`, {
    headers: asSuperAdmin(),
    body: { name: 'pg', type: 'postgis', connection: postgis },
  });
  expect(res.status, res.text).toBe(201);
  return { ws, service: res.body as { id: string; name: string } };
}

async function publish(wsId: string, serviceId: string, body: Record<string, unknown>) {
  return call('POST', `/workspaces/${wsId}/services/${serviceId}/layers`, { headers: asSuperAdmin(), body });
}

describe('services', () => {
  it('creates a service (201) that never returns its password, lists and reads it', async () => {
    const ws = await createWorkspace();
    const body = { name: 'main-db', type: 'postgis', connection: postgis };
    const res = await call('POST', `/workspaces/${ws.id}/services`, { headers: asSuperAdmin(), body });
    expect(res.status, res.text).toBe(201);
    expect(ServiceBody.safeParse(res.body).success).toBe(true);
    expect(res.body.configured_secrets).toEqual(['password']);
    expect(res.body.connection).not.toHaveProperty('password');
    const list = await call('GET', `/workspaces/${ws.id}/services`, { headers: asSuperAdmin() });
    expect(list.body.services.map((s: { name: string }) => s.name)).toEqual(['main-db']);
    expect(list.body.services[0].connection).not.toHaveProperty('password');
    expect(list.body.services[0].configured_secrets).toEqual(['password']);
    // Stored encrypted only: the item holds ciphertext, never the password.
    const db = hostDynamo();
    const secret = 'Only-Ever-Sent-Once-9f2c';
    const offline = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: {
        name: 'offline',
        type: 'postgis',
        enabled: false,
        connection: { ...postgis, password: secret },
      },
    });
    expect(offline.status, offline.text).toBe(201);
    expect(offline.text).not.toContain(secret);
    const item = await db.send(
      new GetCommand({
        TableName: inject('host').tableName,
        Key: { PK: `WS#${ws.id}`, SK: `SERVICE#${offline.body.id}` },
      }),
    );
    expect(item.Item?.password_enc).toMatch(/^v1\./);
    expect(JSON.stringify(item.Item)).not.toContain(secret);
    const byName = await call('GET', `/workspaces/${ws.id}/services/main-db`, { headers: asSuperAdmin() });
    expect(byName.body.id).toBe(res.body.id);
  });

  it('lists [] for a workspace without services, and only that workspace’s', async () => {
    const empty = await createWorkspace();
    await workspaceWithService();
    const res = await call('GET', `/workspaces/${empty.id}/services`, { headers: asSuperAdmin() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ services: [] });
  });

  it('returns 409 for a duplicate name and 400 for a connection that cannot be opened', async () => {
    const { ws } = await workspaceWithService();
    const dup = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'pg', type: 'postgis', connection: postgis },
    });
    expectError(dup, 409, 'service_name_taken');
    const closed = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      // A closed port of an allowed host (the embedded PostGIS' own loopback port is the only one allowed there).
      body: { name: 'down', type: 'postgis', connection: { ...postgis, host: FAULT_HOST, port: 1 } },
    });
    expectError(closed, 400, 'connection_failed');
    expect(
      (await call('GET', `/workspaces/${ws.id}/services`, { headers: asSuperAdmin() })).body.services,
    ).toHaveLength(1);
  });

  it('answers test-connection to a closed port with 200 ok:false and the reason, not a 503 to retry (ADR 0087)', async () => {
    // Prepare: a stored draft (not tested on create) pointing at a closed port of an allowed host.
    const ws = await createWorkspace();
    const draft = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: {
        name: 'typo',
        type: 'postgis',
        enabled: false,
        connection: { ...postgis, host: FAULT_HOST, port: 1 },
      },
    });
    expect(draft.status, draft.text).toBe(201);
    // Act
    const res = await call('POST', `/workspaces/${ws.id}/services/${draft.body.id}/test-connection`, {
      headers: asSuperAdmin(),
    });
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.body).toEqual({
      ok: false,
      duration_ms: expect.any(Number),
      message: `Could not connect to ${FAULT_HOST}:1/${postgis.database}: it could not be reached, or did not answer as PostgreSQL.`,
    });
  });

  it('tests the connection and discovers the geometry tables', async () => {
    const { ws, service } = await workspaceWithService();
    const test = await call('POST', `/workspaces/${ws.id}/services/${service.id}/test-connection`, {
      headers: asSuperAdmin(),
    });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: true, duration_ms: expect.any(Number) });
    const found = await call('POST', `/workspaces/${ws.id}/services/${service.id}/discover`, {
      headers: asSuperAdmin(),
    });
    expect(found.status).toBe(200);
    const names = found.body.layers.map((l: { table: string }) => l.table);
    expect(names).toEqual(expect.arrayContaining(['places', 'roads', 'parcels']));
    expect(names).not.toContain('notes');
  });

  it('keeps the stored password when an update omits it, and honours If-Match', async () => {
    const { ws, service } = await workspaceWithService();
    const path = `/workspaces/${ws.id}/services/${service.id}`;
    const stale = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"9"' },
      body: { name: 'pg', type: 'postgis', connection: postgis },
    });
    expectError(stale, 412);
    const renamed = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { name: 'pg2', type: 'postgis', connection: postgis },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'pg2', version: 2 });
    expect((await call('GET', `/workspaces/${ws.id}/services/pg2`, { headers: asSuperAdmin() })).status).toBe(
      200,
    );
  });

  it('returns 404 for an unknown service and 403 to viewers creating one', async () => {
    const { ws } = await workspaceWithService();
    expectError(
      await call('GET', `/workspaces/${ws.id}/services/nope`, { headers: asSuperAdmin() }),
      404,
      'service_not_found',
    );
    const viewer = await createKey(ws.id, 'viewer');
    const res = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: withKey(viewer.key),
      body: { name: 'x', type: 'postgis', connection: postgis },
    });
    expectError(res, 403);
    expect(
      (await call('GET', `/workspaces/${ws.id}/services`, { headers: withKey(viewer.key) })).status,
    ).toBe(200);
  });
});

describe('createLayer (spec 4.1 and §3)', () => {
  it('publishes an enabled layer with the defaults', async () => {
    const { ws, service } = await workspaceWithService();
    const res = await publish(ws.id, service.id, { source_layer: 'places' });
    expect(res.status, res.text).toBe(201);
    expect(LayerBody.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      source_layer: 'places',
      public_id: 'places',
      title: 'places',
      crs_default: 4326,
      enabled: true,
      public: false,
      is_sql_view: false,
    });
    expect(res.body.native_extent).toBeDefined();
  });

  it('returns 422 when the source is missing or unreadable, and writes nothing', async () => {
    const { ws, service } = await workspaceWithService();
    expectError(
      await publish(ws.id, service.id, { source_layer: 'no_such_table' }),
      422,
      'source_unreadable',
    );
    expectError(await publish(ws.id, service.id, { source_layer: 'notes' }), 422, 'source_unreadable');
    const list = await call('GET', `/workspaces/${ws.id}/services/${service.id}/layers`, {
      headers: asSuperAdmin(),
    });
    expect(list.body.layers).toEqual([]);
  });

  it('saves an offline draft without touching the source; enabling it later validates (422)', async () => {
    const { ws, service } = await workspaceWithService();
    const draft = await publish(ws.id, service.id, { source_layer: 'not_yet_there', enabled: false });
    expect(draft.status, draft.text).toBe(201);
    expect(draft.body.enabled).toBe(false);
    const path = `/workspaces/${ws.id}/services/${service.id}/layers/${draft.body.id}`;
    expectError(await call('PUT', path, { headers: asSuperAdmin(), body: { enabled: true } }), 422);
    const fixed = await call('PUT', path, {
      headers: asSuperAdmin(),
      body: { source_layer: 'roads', enabled: true },
    });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body).toMatchObject({ enabled: true, source_layer: 'roads', public_id: 'not_yet_there' });
  });

  it('returns 409 when the public_id is taken (layers and drafts alike)', async () => {
    const { ws, service } = await workspaceWithService();
    expect(
      (await publish(ws.id, service.id, { source_layer: 'places', public_id: 'shared', enabled: false }))
        .status,
    ).toBe(201);
    expectError(
      await publish(ws.id, service.id, { source_layer: 'roads', public_id: 'shared' }),
      409,
      'public_id_taken',
    );
  });

  it('gives exactly one 201 among 50 concurrent publications of one public_id', async () => {
    const { ws, service } = await workspaceWithService();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        publish(ws.id, service.id, { source_layer: 'places', public_id: 'race', enabled: false }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(49);
  });

  it.each([
    ['neither source_layer nor sql_view', {}],
    [
      'both source_layer and sql_view',
      { source_layer: 'places', sql_view: { sql: 'select 1', geometry_column: 'g' } },
    ],
    ['an unknown field', { source_layer: 'places', colour: 'red' }],
    ['a bad public_id', { source_layer: 'places', public_id: 'has space' }],
    ['an unknown allowed role', { source_layer: 'places', allowed_roles: ['no-such-role'], enabled: false }],
    ['a wrong type', { source_layer: 'places', crs_default: 'EPSG:4326' }],
  ])('returns 400 for %s', async (_case, body) => {
    const { ws, service } = await workspaceWithService();
    expectError(await publish(ws.id, service.id, body), 400);
  });

  it('publishes a read-only SQL view and refuses hostile SQL even as a draft (422)', async () => {
    const { ws, service } = await workspaceWithService();
    const view = await publish(ws.id, service.id, {
      public_id: 'big-places',
      sql_view: { sql: 'SELECT id, name, geom FROM places WHERE id < 50', geometry_column: 'geom' },
    });
    expect(view.status, view.text).toBe(201);
    expect(view.body).toMatchObject({
      is_sql_view: true,
      source_layer: '_sql_view_',
      sql_view: { read_only: true },
    });
    const hostile = await publish(ws.id, service.id, {
      public_id: 'evil',
      enabled: false,
      sql_view: { sql: 'DELETE FROM places', geometry_column: 'geom' },
    });
    expectError(hostile, 422);
  });

  it('lets editors publish but not viewers', async () => {
    const { ws, service } = await workspaceWithService();
    const editor = await createKey(ws.id, 'editor');
    const viewer = await createKey(ws.id, 'viewer');
    const path = `/workspaces/${ws.id}/services/${service.id}/layers`;
    expect(
      (await call('POST', path, { headers: withKey(editor.key), body: { source_layer: 'roads' } })).status,
    ).toBe(201);
    expectError(
      await call('POST', path, { headers: withKey(viewer.key), body: { source_layer: 'parcels' } }),
      403,
    );
  });
});

describe("layers' allowed_roles", () => {
  it('keep a custom role from being deleted while a layer lists it (409), and release it with the layer', async () => {
    const { ws, service } = await workspaceWithService();
    const roleId = `r-${Math.random().toString(36).slice(2, 10)}`;
    expect((await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: roleId } })).status).toBe(
      201,
    );
    const layer = await publish(ws.id, service.id, {
      source_layer: 'places',
      allowed_roles: [roleId, 'viewer'],
      enabled: false,
    });
    expect(layer.status, layer.text).toBe(201);
    expect(layer.body.allowed_roles).toEqual([roleId, 'viewer']);
    expectError(await call('DELETE', `/roles/${roleId}`, { headers: asSuperAdmin() }), 409, 'role_in_use');
    const path = `/workspaces/${ws.id}/services/${service.id}/layers/${layer.body.id}`;
    expect((await call('DELETE', path, { headers: asSuperAdmin() })).status).toBe(204);
    expect((await call('DELETE', `/roles/${roleId}`, { headers: asSuperAdmin() })).status).toBe(204);
  });
});

describe('layers drawn with workspace styles', () => {
  const style = (name: string) => ({
    name,
    format: 'mapbox',
    body: {
      version: 8,
      sources: {},
      layers: [{ id: 'bg', type: 'background', paint: { 'background-color': '#fff' } }],
    },
  });

  it('must name existing styles (400), and keep a used style from deletion or rename (409) until released', async () => {
    const { ws, service } = await workspaceWithService();
    for (const name of ['plain', 'fancy']) {
      const res = await call('POST', `/workspaces/${ws.id}/styles`, {
        headers: asSuperAdmin(),
        body: style(name),
      });
      expect(res.status, res.text).toBe(201);
    }
    expectError(
      await publish(ws.id, service.id, { source_layer: 'places', default_style: 'missing', enabled: false }),
      400,
      'unknown_style',
    );
    const layer = await publish(ws.id, service.id, {
      source_layer: 'places',
      default_style: 'plain',
      styles: ['plain', 'fancy'],
      enabled: false,
    });
    expect(layer.status, layer.text).toBe(201);
    expect(layer.body).toMatchObject({ default_style: 'plain', styles: ['plain', 'fancy'] });
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/styles/fancy`, { headers: asSuperAdmin() }),
      409,
      'style_in_use',
    );
    const path = `/workspaces/${ws.id}/services/${service.id}/layers/${layer.body.id}`;
    const updated = await call('PUT', path, { headers: asSuperAdmin(), body: { styles: ['plain'] } });
    expect(updated.status, updated.text).toBe(200);
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/styles/fancy`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/styles/plain`, { headers: asSuperAdmin() }),
      409,
      'style_in_use',
    );
    expect((await call('DELETE', path, { headers: asSuperAdmin() })).status).toBe(204);
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/styles/plain`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
  });
});

describe('validateSQLView (spec 4.2)', () => {
  it('discovers columns and geometry of a valid query; refuses others with valid:false', async () => {
    const { ws, service } = await workspaceWithService();
    const path = `/workspaces/${ws.id}/services/${service.id}/validate-sql`;
    const good = await call('POST', path, { headers: asSuperAdmin(), body: { sql: 'SELECT * FROM places' } });
    expect(good.status, good.text).toBe(200);
    expect(ValidateSQLResponse.safeParse(good.body).success).toBe(true);
    expect(good.body).toMatchObject({ valid: true, discovered: { geometry_column: 'geom', srid: 4326 } });
    const bad = await call('POST', path, { headers: asSuperAdmin(), body: { sql: 'DROP TABLE places' } });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.error.length).toBeGreaterThan(0);
    // Nothing was dropped.
    expect(
      (
        await call('POST', path, {
          headers: asSuperAdmin(),
          body: { sql: 'SELECT count(*) AS n, ST_Collect(geom) AS geom FROM places' },
        })
      ).body.valid,
    ).toBe(true);
    expectError(
      await call('POST', `/workspaces/${ws.id}/services/nope/validate-sql`, {
        headers: asSuperAdmin(),
        body: { sql: 'SELECT 1' },
      }),
      404,
    );
  });
});

describe('layers: read, update, delete', () => {
  it('pages layers, reads one, updates with If-Match and deletes it', async () => {
    const { ws, service } = await workspaceWithService();
    for (const t of ['a', 'b', 'c'])
      await publish(ws.id, service.id, { source_layer: 'places', public_id: t, enabled: false });
    const base = `/workspaces/${ws.id}/services/${service.id}/layers`;
    const first = await call('GET', `${base}?limit=2`, { headers: asSuperAdmin() });
    expect(first.body.layers).toHaveLength(2);
    const second = await call('GET', `${base}?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
      headers: asSuperAdmin(),
    });
    expect(second.body.layers).toHaveLength(1);
    const layer = first.body.layers[0];
    const got = await call('GET', `${base}/${layer.id}`, { headers: asSuperAdmin() });
    expect(got.headers.etag).toBe('"1"');
    expectError(
      await call('PUT', `${base}/${layer.id}`, {
        headers: { ...asSuperAdmin(), 'If-Match': '"5"' },
        body: { title: 'x' },
      }),
      412,
    );
    const updated = await call('PUT', `${base}/${layer.id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { title: 'Nice' },
    });
    expect(updated.body).toMatchObject({ title: 'Nice', version: 2 });
    expect((await call('DELETE', `${base}/${layer.id}`, { headers: asSuperAdmin() })).status).toBe(204);
    expectError(await call('GET', `${base}/${layer.id}`, { headers: asSuperAdmin() }), 404);
    // The public id is free again.
    expect(
      (
        await publish(ws.id, service.id, {
          source_layer: 'places',
          public_id: layer.public_id,
          enabled: false,
        })
      ).status,
    ).toBe(201);
  });
});

describe('layer groups', () => {
  async function group(wsId: string, public_id: string, members: string[]) {
    return call('POST', `/workspaces/${wsId}/layer-groups`, {
      headers: asSuperAdmin(),
      body: { public_id, members: members.map((resource) => ({ resource })) },
    });
  }

  it('creates groups of existing layers and groups; members must exist; public ids are shared', async () => {
    const { ws, service } = await workspaceWithService();
    await publish(ws.id, service.id, { source_layer: 'places', public_id: 'l1', enabled: false });
    await publish(ws.id, service.id, { source_layer: 'roads', public_id: 'l2', enabled: false });
    const g1 = await group(ws.id, 'g1', ['l1', 'l2']);
    expect(g1.status, g1.text).toBe(201);
    expect(LayerGroupBody.safeParse(g1.body).success).toBe(true);
    expect((await group(ws.id, 'g2', ['g1'])).status).toBe(201);
    expectError(await group(ws.id, 'g3', ['missing']), 400, 'unknown_member');
    expectError(await group(ws.id, 'l1', ['l2']), 409, 'public_id_taken');
    expectError(
      await publish(ws.id, service.id, { source_layer: 'places', public_id: 'g1', enabled: false }),
      409,
    );
  });

  it('refuses cycles (422) and deleting members that a group contains (409)', async () => {
    const { ws, service } = await workspaceWithService();
    const layer = await publish(ws.id, service.id, {
      source_layer: 'places',
      public_id: 'base',
      enabled: false,
    });
    await group(ws.id, 'inner', ['base']);
    const outer = await group(ws.id, 'outer', ['inner']);
    const inner = await call('GET', `/workspaces/${ws.id}/layer-groups/inner`, { headers: asSuperAdmin() });
    const cycle = await call('PUT', `/workspaces/${ws.id}/layer-groups/${inner.body.id}`, {
      headers: asSuperAdmin(),
      body: { public_id: 'inner', members: [{ resource: 'base' }, { resource: 'outer' }] },
    });
    expectError(cycle, 422, 'group_cycle');
    expectError(await group(ws.id, 'selfish', ['selfish']), 400);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/services/${service.id}/layers/${layer.body.id}`, {
        headers: asSuperAdmin(),
      }),
      409,
      'layer_in_group',
    );
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/layer-groups/inner`, { headers: asSuperAdmin() }),
      409,
      'group_in_group',
    );
    expect(
      (
        await call('DELETE', `/workspaces/${ws.id}/layer-groups/${outer.body.id}`, {
          headers: asSuperAdmin(),
        })
      ).status,
    ).toBe(204);
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/layer-groups/inner`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
    expect(
      (
        await call('DELETE', `/workspaces/${ws.id}/services/${service.id}/layers/${layer.body.id}`, {
          headers: asSuperAdmin(),
        })
      ).status,
    ).toBe(204);
  });

  it('lists groups and 404s unknown ones', async () => {
    const { ws, service } = await workspaceWithService();
    await publish(ws.id, service.id, { source_layer: 'places', public_id: 'p', enabled: false });
    await group(ws.id, 'gg', ['p']);
    const list = await call('GET', `/workspaces/${ws.id}/layer-groups`, { headers: asSuperAdmin() });
    expect(list.body.layer_groups.map((g: { public_id: string }) => g.public_id)).toEqual(['gg']);
    expectError(
      await call('GET', `/workspaces/${ws.id}/layer-groups/${uniqueName('x')}`, { headers: asSuperAdmin() }),
      404,
    );
  });
});
