import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { adminQuery, importsOf, pointsGeoJson } from '../support/imports.ts';

// Issue #22: one workspace must not read another's imported data, published or staged, by any
// path the probe used — isolation by the database (a login per import), not by names (ADR 0105).

const hexOf = (id: string) => id.replaceAll('-', '');

interface Side {
  ws: { id: string; name: string };
  editor: Record<string, string>;
  admin: Record<string, string>;
  importId: string;
  serviceId?: string;
}

async function side(publish: boolean): Promise<Side> {
  const ws = await createWorkspace();
  const editor = withKey((await createKey(ws.name, 'editor')).key);
  const admin = withKey((await createKey(ws.name, 'admin')).key);
  const imports = importsOf(ws.name);
  const job = await imports.uploaded(pointsGeoJson(25), 'secret_points.geojson', {
    service_name: `svc-${ws.name}`,
  });
  const ready = await imports.until(job.id, ['ready_to_publish', 'failed']);
  expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
  if (!publish) return { ws, editor, admin, importId: job.id };
  expect((await imports.publish(job.id)).status).toBe(202);
  const done = await imports.until(job.id, ['published', 'failed']);
  expect(done.body.status, JSON.stringify(done.body)).toBe('published');
  return { ws, editor, admin, importId: job.id, serviceId: done.body.service_id };
}

describe("a workspace can't read another workspace's imported data", () => {
  let a: Side;
  let staged: Side;
  let b: Side;
  let svcB: string;

  beforeAll(async () => {
    [a, staged, b] = await Promise.all([side(true), side(false), side(true)]);
    svcB = `/workspaces/${b.ws.id}/services/${b.serviceId}`;
  }, 180_000);

  const others = () => [
    `import_${hexOf(a.importId)}.secret_points`,
    `import_staging_${hexOf(staged.importId)}.secret_points`,
    `import_staging_${hexOf(staged.importId)}."geoplane$checkpoint"`,
    'geoplane_imports.fences',
    'public.secrets',
  ];

  it("publishes each import under a login of its own, with a generated password that isn't the loader's", async () => {
    const service = await call('GET', svcB, { headers: asSuperAdmin() });
    expect(service.status, service.text).toBe(200);
    expect(service.body.connection.user).toBe(`geoplane_imp_${hexOf(b.importId)}`);
    expect(service.body.connection.schemas).toEqual([`import_${hexOf(b.importId)}`]);
    expect(JSON.stringify(service.body)).not.toMatch(/password"\s*:/);
    const logins = await adminQuery<{ rolname: string; rolsuper: boolean; rolcreaterole: boolean }>(
      "SELECT rolname, rolsuper, rolcreaterole FROM pg_roles WHERE rolname LIKE 'geoplane\\_imp\\_%' AND rolname IN ($1, $2)",
      [`geoplane_imp_${hexOf(a.importId)}`, `geoplane_imp_${hexOf(b.importId)}`],
    );
    expect(logins).toHaveLength(2);
    for (const l of logins) expect(l).toMatchObject({ rolsuper: false, rolcreaterole: false });
    // The shared reader of before is retired: it can't log in.
    const retired = await adminQuery<{ rolcanlogin: boolean }>(
      "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'geoplane_import_reader'",
    );
    for (const r of retired) expect(r.rolcanlogin).toBe(false);
  });

  it("refuses validate-sql naming another workspace's schema, published or staged, in every position", async () => {
    for (const relation of others()) {
      for (const sql of [
        `SELECT * FROM ${relation}`,
        `SELECT p.* FROM secret_points p WHERE EXISTS (SELECT 1 FROM ${relation})`,
        `WITH x AS (SELECT * FROM ${relation}) SELECT p.* FROM secret_points p, x`,
        `SELECT p.*, (SELECT count(*) FROM ${relation}) FROM secret_points p`,
      ]) {
        const res = await call('POST', `${svcB}/validate-sql`, { headers: b.editor, body: { sql } });
        expect(res.status, res.text).toBe(200);
        expect(res.body.valid, sql).toBe(false);
        expect(res.body.error).toMatch(/not one of the service's schemas|system catalogs|not allowed/);
      }
    }
    // Its own data is readable as before.
    const own = await call('POST', `${svcB}/validate-sql`, {
      headers: b.editor,
      body: { sql: `SELECT name, geom FROM import_${hexOf(b.importId)}.secret_points` },
    });
    expect(own.body, own.text).toMatchObject({ valid: true });
  });

  it("refuses a layer or SQL view in B over A's tables, and leaves nothing behind", async () => {
    const before = await call('GET', `${svcB}/layers`, { headers: b.editor });
    for (const relation of others()) {
      const layer = await call('POST', `${svcB}/layers`, {
        headers: b.editor,
        body: { source_layer: relation.replaceAll('"', ''), public_id: `x${Date.now()}`, enabled: true },
      });
      expect([400, 404, 422], layer.text).toContain(layer.status);
      const view = await call('POST', `${svcB}/layers`, {
        headers: b.editor,
        body: {
          public_id: `v${Date.now()}`,
          enabled: true,
          sql_view: { sql: `SELECT * FROM ${relation}`, geometry_column: 'geom' },
        },
      });
      expect([400, 422], view.text).toContain(view.status);
    }
    const after = await call('GET', `${svcB}/layers`, { headers: b.editor });
    expect(after.body.layers).toEqual(before.body.layers);
  });

  it("refuses pointing B's import service at A's schema or login (the database would refuse it too)", async () => {
    const current = (await call('GET', svcB, { headers: asSuperAdmin() })).body;
    const { password: _, ...connection } = current.connection;
    for (const change of [
      { schemas: [`import_${hexOf(a.importId)}`] },
      { user: `geoplane_imp_${hexOf(a.importId)}`, schemas: [`import_${hexOf(a.importId)}`] },
      { user: `geoplane_imp_${hexOf(a.importId)}` },
    ]) {
      const res = await call('PUT', svcB, {
        headers: b.admin,
        body: { name: current.name, type: 'postgis', connection: { ...connection, ...change } },
      });
      expect([400, 422], `${JSON.stringify(change)}: ${res.text}`).toContain(res.status);
    }
    // Still B's own connection.
    const after = (await call('GET', svcB, { headers: asSuperAdmin() })).body;
    expect(after.connection).toEqual(current.connection);
  });

  it("refuses a service as the loader login, and another import's login doesn't open with a guess", async () => {
    const boot = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8'));
    const target = {
      host: boot.postgis.host,
      port: boot.postgis.port,
      database: boot.postgis.database,
      sslmode: 'disable',
    };
    for (const user of ['geoplane_importer', 'GEOPLANE_IMPORTER', `geoplane_imp_${hexOf(a.importId)}`]) {
      for (const password of ['geoplane_importer', 'geoplane_import_reader', user]) {
        const res = await call('POST', `/workspaces/${b.ws.id}/services`, {
          headers: b.admin,
          body: { name: `probe-${Date.now()}`, type: 'postgis', connection: { ...target, user, password } },
        });
        expect(res.status, res.text).toBe(400);
        expect(['connection_login_reserved', 'connection_failed']).toContain(res.body.reason);
      }
    }
    // Reserved by name whatever the password: the loader is never a service's login.
    const loader = await call('POST', `/workspaces/${b.ws.id}/services`, {
      headers: b.admin,
      body: {
        name: `probe-${Date.now()}`,
        type: 'postgis',
        enabled: false,
        connection: { ...target, user: 'geoplane_importer', password: 'x' },
      },
    });
    expectError(loader, 400, 'connection_login_reserved');
    // A's reader login, even with A's own schema, answers as a wrong password does.
    const guessed = await call('POST', `/workspaces/${b.ws.id}/services`, {
      headers: b.admin,
      body: {
        name: `probe-${Date.now()}`,
        type: 'postgis',
        connection: {
          ...target,
          user: `geoplane_imp_${hexOf(a.importId)}`,
          password: 'geoplane_import_reader',
          schemas: [`import_${hexOf(a.importId)}`],
        },
      },
    });
    expectError(guessed, 400, 'connection_failed');
    const list = await call('GET', `/workspaces/${b.ws.id}/services`, { headers: b.admin });
    expect(list.body.services.map((s: { name: string }) => s.name)).not.toContainEqual(
      expect.stringMatching(/^probe-/),
    );
  });

  it("keeps the loader's password out of the source: the old fixed one no longer opens it", async () => {
    const marker = JSON.parse(readFileSync(join(inject('host').dataDir, 'postgis.json'), 'utf8'));
    expect(marker.importer_password).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(marker.importer_password).not.toBe('geoplane_importer');
  });

  it("drops the import's login with its rollback", async () => {
    const imports = importsOf(a.ws.name);
    expect((await imports.rollback(a.importId)).status).toBe(202);
    const end = await imports.until(a.importId, ['rolled_back', 'failed'], 120_000);
    expect(end.body.status, JSON.stringify(end.body)).toBe('rolled_back');
    const left = await adminQuery('SELECT 1 FROM pg_roles WHERE rolname = $1', [
      `geoplane_imp_${hexOf(a.importId)}`,
    ]);
    expect(left).toEqual([]);
  });
});

describe('a stored password goes only where it was given for', () => {
  it('refuses a new host, port, database, user or sslmode without the password again, and writes nothing', async () => {
    const ws = await createWorkspace();
    const admin = withKey((await createKey(ws.name, 'admin')).key);
    const boot = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8'));
    const connection = { ...boot.postgis, sslmode: 'disable' };
    const created = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: admin,
      body: { name: 'demo-db', type: 'postgis', connection },
    });
    expect(created.status, created.text).toBe(201);
    const path = `/workspaces/${ws.id}/services/${created.body.id}`;
    const { password: _, ...withoutPassword } = connection;
    for (const change of [
      { host: 'localhost' },
      { port: connection.port + 1 },
      { database: 'other' },
      { user: 'someone' },
      { sslmode: 'prefer' },
    ]) {
      const res = await call('PUT', path, {
        headers: admin,
        body: {
          name: 'demo-db',
          type: 'postgis',
          enabled: false,
          connection: { ...withoutPassword, ...change },
        },
      });
      expectError(res, 400, 'password_required');
    }
    const same = await call('GET', path, { headers: admin });
    expect(same.body.version).toBe(created.body.version);
    // Unchanged endpoint: the stored password stays, as before.
    const renamed = await call('PUT', path, {
      headers: admin,
      body: { name: 'demo-db-2', type: 'postgis', connection: withoutPassword },
    });
    expect(renamed.status, renamed.text).toBe(200);
  });
});
