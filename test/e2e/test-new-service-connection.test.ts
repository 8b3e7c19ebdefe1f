import { describe, expect, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { hostPostgis } from '../support/data-plane.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { FAULT_HOST } from '../support/host-process.ts';

/*
 * testNewServiceConnection (issue #26, ADR 0131): a connection body tried before it is saved, under
 * createService's network policy and with testExistingServiceConnection's answers.
 */

const path = (ws: string) => `/workspaces/${ws}/services/test-connection`;
const tryIt = (ws: string, connection: Record<string, unknown>, headers = asSuperAdmin()) =>
  call('POST', path(ws), { headers, body: { type: 'postgis', connection } });

describe('testNewServiceConnection (POST /workspaces/{workspace}/services/test-connection)', () => {
  it('answers 200 ok: true for a reachable PostGIS, stores nothing and never echoes the password', async () => {
    const ws = await createWorkspace();
    const res = await tryIt(ws.name, { ...hostPostgis(), sslmode: 'disable' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ok: true, duration_ms: expect.any(Number) });
    expect(res.body.message).toMatch(/PostGIS/);
    const password = hostPostgis().password;
    if (password) expect(res.text).not.toContain(password);
    const list = await call('GET', `/workspaces/${ws.id}/services`, { headers: asSuperAdmin() });
    expect(list.body.services).toEqual([]);
  });

  it('answers an unreachable target 200 ok: false with the very message testExistingServiceConnection gives', async () => {
    const ws = await createWorkspace();
    const connection = { ...hostPostgis(), host: FAULT_HOST, port: 1 };
    const res = await tryIt(ws.id, connection);
    expect(res.status, res.text).toBe(200);
    expect(res.headers).not.toHaveProperty('retry-after');
    const draft = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: uniqueName('draft'), type: 'postgis', enabled: false, connection },
    });
    expect(draft.status, draft.text).toBe(201);
    const stored = await call('POST', `/workspaces/${ws.id}/services/${draft.body.id}/test-connection`, {
      headers: asSuperAdmin(),
    });
    expect(stored.status).toBe(200);
    expect(res.body).toEqual({ ok: false, duration_ms: expect.any(Number), message: stored.body.message });
  });

  it('answers a refused login 200 ok: false (PostgreSQL’s own answer)', async () => {
    const ws = await createWorkspace();
    const res = await tryIt(ws.id, { ...hostPostgis(), sslmode: 'disable', password: 'not-the-password' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.ok).toBe(false);
    expect(res.text).not.toContain('not-the-password');
  });

  it.each([
    ['a loopback port', '127.0.0.1', 22],
    ['the metadata service', '169.254.169.254', 80],
    ['a private address', '10.0.0.1', 5432],
  ])(
    'refuses %s with 400 connection_target_not_allowed, as createService does',
    async (_what, host, port) => {
      const ws = await createWorkspace();
      const connection = { ...hostPostgis(), host, port };
      expectError(await tryIt(ws.id, connection), 400, 'connection_target_not_allowed');
      const created = await call('POST', `/workspaces/${ws.id}/services`, {
        headers: asSuperAdmin(),
        body: { name: 'x', type: 'postgis', connection },
      });
      expectError(created, 400, 'connection_target_not_allowed');
    },
  );

  it('refuses the import database’s loader login with 400 connection_login_reserved', async () => {
    const ws = await createWorkspace();
    expectError(
      await tryIt(ws.id, { ...hostPostgis(), user: 'geoplane_importer', password: 'guess' }),
      400,
      'connection_login_reserved',
    );
  });

  it.each([
    ['no connection', { type: 'postgis' }],
    ['a raster mosaic', { type: 'raster_mosaic', connection: { root_uri: '/tmp' } }],
    [
      'an unknown field',
      { type: 'postgis', connection: { host: 'db', database: 'gis', user: 'u' }, name: 'x' },
    ],
    [
      'a port out of range',
      { type: 'postgis', connection: { host: 'db', port: 70000, database: 'gis', user: 'u' } },
    ],
  ])('answers 400 with the standard body for %s', async (_what, body) => {
    const ws = await createWorkspace();
    expectError(await call('POST', path(ws.id), { headers: asSuperAdmin(), body }), 400);
  });

  it('answers 404 for an unknown workspace', async () => {
    expectError(await tryIt(uniqueName(), { ...hostPostgis(), host: FAULT_HOST, port: 1 }), 404);
  });

  it('answers its admin 200 and, like createService, editors, viewers and other workspaces’ admins 403', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const connection = { ...hostPostgis(), host: FAULT_HOST, port: 1 };
    const admin = await createKey(ws.id, 'admin');
    expect((await tryIt(ws.id, connection, withKey(admin.key))).status).toBe(200);
    for (const key of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      const sibling = await call('POST', `/workspaces/${ws.id}/services`, {
        headers: withKey(key.key),
        body: { name: 'x', type: 'postgis', enabled: false, connection },
      });
      const refused = await tryIt(ws.id, connection, withKey(key.key));
      expectError(refused, 403);
      expect(refused.status).toBe(sibling.status);
    }
    expectError(await call('POST', path(ws.id), { body: { type: 'postgis', connection } }), 401);
  });
});
