import { describe, expect, it } from 'vitest';
import { RoleBody } from '#api/schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';

const roleId = () => `r-${Math.random().toString(36).slice(2, 10)}`;

async function createRole(id = roleId(), extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

describe('createRole (spec 4.18)', () => {
  it('returns 201 with the role; name defaults to the id', async () => {
    const id = roleId();
    const res = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id, description: 'd' } });
    expect(res.status).toBe(201);
    expect(RoleBody.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ id, name: id, description: 'd', is_system: false });
    expect(res.headers.location).toBe(`/api/v1/roles/${id}`);
  });

  it.each([['Upper'], ['1starts-with-digit'], ['a'], ['has space'], ['x'.repeat(65)]])(
    'returns 400 for the id %j',
    async (id) => {
      expectError(
        await call('POST', '/roles', { headers: asSuperAdmin(), body: { id } }),
        400,
        'validation_failed',
      );
    },
  );

  it('returns 400 for a missing id and an unknown field', async () => {
    expectError(await call('POST', '/roles', { headers: asSuperAdmin(), body: { name: 'x' } }), 400);
    expectError(
      await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: roleId(), extra: 1 } }),
      400,
    );
  });

  it('returns 409 for an existing id, a built-in id and a retired id', async () => {
    const role = await createRole();
    expectError(
      await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: role.id } }),
      409,
      'role_id_unavailable',
    );
    expectError(
      await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: 'editor' } }),
      409,
      'role_id_unavailable',
    );
    expect((await call('DELETE', `/roles/${role.id}`, { headers: asSuperAdmin() })).status).toBe(204);
    expectError(
      await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: role.id } }),
      409,
      'role_id_unavailable',
    );
  });

  it('returns 403 for anyone but super_admin (workspace admin key, admin JWT)', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expectError(
      await call('POST', '/roles', { headers: withKey(admin.key), body: { id: roleId() } }),
      403,
      'super_admin_required',
    );
    const jwt = await token({ workspaces: { [ws.id]: 'admin' } });
    expectError(await call('POST', '/roles', { headers: bearer(jwt), body: { id: roleId() } }), 403);
  });

  it('gives exactly one 201 among 10 concurrent creates of one id', async () => {
    const id = roleId();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call('POST', '/roles', { headers: asSuperAdmin(), body: { id } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
  });
});

describe('listRoles (spec 4.19), getRole and deleteRole', () => {
  it('lists the four built-ins first, then custom roles', async () => {
    const role = await createRole();
    const res = await call('GET', '/roles', { headers: asSuperAdmin() });
    expect(res.status).toBe(200);
    const roles = res.body.roles as { id: string; is_system: boolean }[];
    expect(roles.slice(0, 4).map((r) => [r.id, r.is_system])).toEqual([
      ['super_admin', true],
      ['admin', true],
      ['editor', true],
      ['viewer', true],
    ]);
    expect(roles.find((r) => r.id === role.id)?.is_system).toBe(false);
    for (const r of roles) expect(RoleBody.safeParse(r).success).toBe(true);
  });

  it('returns 403 to a workspace admin', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expectError(await call('GET', '/roles', { headers: withKey(admin.key) }), 403);
  });

  it('reads built-in and custom roles; 404 for unknown and retired ids', async () => {
    const role = await createRole();
    expect((await call('GET', '/roles/viewer', { headers: asSuperAdmin() })).body).toMatchObject({
      is_system: true,
    });
    expect((await call('GET', `/roles/${role.id}`, { headers: asSuperAdmin() })).body.id).toBe(role.id);
    expectError(await call('GET', `/roles/${roleId()}`, { headers: asSuperAdmin() }), 404, 'role_not_found');
    await call('DELETE', `/roles/${role.id}`, { headers: asSuperAdmin() });
    expectError(await call('GET', `/roles/${role.id}`, { headers: asSuperAdmin() }), 404);
    const listed = await call('GET', '/roles', { headers: asSuperAdmin() });
    expect(listed.body.roles.map((r: { id: string }) => r.id)).not.toContain(role.id);
  });

  it('refuses to delete built-ins (400) and unknown roles (404)', async () => {
    expectError(await call('DELETE', '/roles/admin', { headers: asSuperAdmin() }), 400, 'system_role');
    expectError(await call('DELETE', `/roles/${roleId()}`, { headers: asSuperAdmin() }), 404);
  });

  it('refuses to delete a role a claim mapping uses (409), and allows it once the mapping is gone', async () => {
    const role = await createRole();
    const ws = await createWorkspace();
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'groups', claim_value: 'ops', role_id: role.id },
    });
    expect(mapping.status).toBe(201);
    expectError(await call('DELETE', `/roles/${role.id}`, { headers: asSuperAdmin() }), 409, 'role_in_use');
    expect(
      (
        await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mapping.body.id}`, {
          headers: asSuperAdmin(),
        })
      ).status,
    ).toBe(204);
    expect((await call('DELETE', `/roles/${role.id}`, { headers: asSuperAdmin() })).status).toBe(204);
  });
});

describe('addRolePolicy (spec 4.20), listRolePolicies and removeRolePolicy', () => {
  it('returns 201 with no body and lists the policy with the workspace stored as its id', async () => {
    const role = await createRole();
    const ws = await createWorkspace();
    const res = await call('POST', `/roles/${role.id}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: ws.name, service: 'management', operation: 'updateWorkspace', action: 'manage' },
    });
    expect(res.status).toBe(201);
    expect(res.text).toBe('');
    const list = await call('GET', `/roles/${role.id}/policies`, { headers: asSuperAdmin() });
    expect(list.body.policies).toEqual([
      expect.objectContaining({
        workspace: ws.id,
        service: 'management',
        operation: 'updateWorkspace',
        action: 'manage',
      }),
    ]);
    // Granting twice is harmless.
    const again = await call('POST', `/roles/${role.id}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: ws.id, service: 'management', operation: 'updateWorkspace', action: 'manage' },
    });
    expect(again.status).toBe(201);
    expect(
      (await call('GET', `/roles/${role.id}/policies`, { headers: asSuperAdmin() })).body.policies,
    ).toHaveLength(1);
  });

  it.each([
    ['a WMS write', { workspace: '*', service: 'wms', action: 'write' }],
    ['a WFS delete on every operation', { workspace: '*', service: 'wfs', action: 'delete' }],
    [
      'an unknown management operation',
      { workspace: '*', service: 'management', operation: 'launchRocket', action: 'read' },
    ],
    [
      'an action the operation does not use',
      { workspace: '*', service: 'management', operation: 'getWorkspace', action: 'manage' },
    ],
    [
      'a super_admin-only operation',
      { workspace: '*', service: 'management', operation: 'createWorkspace', action: 'manage' },
    ],
    ['an unknown WMS operation', { workspace: '*', service: 'wms', operation: 'GetCoffee', action: 'read' }],
    ['an unknown workspace', { workspace: 'no-such-workspace-x', service: 'wms', action: 'read' }],
  ])('returns 422 for %s', async (_case, body) => {
    const role = await createRole();
    expectError(
      await call('POST', `/roles/${role.id}/policies`, { headers: asSuperAdmin(), body }),
      422,
      'invalid_policy',
    );
  });

  it.each([
    ['an unknown service', { workspace: '*', service: 'ftp', action: 'read' }],
    ['a missing action', { workspace: '*', service: 'wms' }],
    ['an unknown field', { workspace: '*', service: 'wms', action: 'read', extra: true }],
  ])('returns 400 for %s', async (_case, body) => {
    const role = await createRole();
    expectError(await call('POST', `/roles/${role.id}/policies`, { headers: asSuperAdmin(), body }), 400);
  });

  it('returns 404 for an unknown role and 400 for a built-in role', async () => {
    const body = { workspace: '*', service: 'wms', action: 'read' };
    expectError(await call('POST', `/roles/${roleId()}/policies`, { headers: asSuperAdmin(), body }), 404);
    expectError(await call('POST', '/roles/viewer/policies', { headers: asSuperAdmin(), body }), 400);
  });

  it('accepts protocol operations case-insensitively and stores them upper-case', async () => {
    const role = await createRole();
    const res = await call('POST', `/roles/${role.id}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: '*', service: 'wfs', operation: 'Transaction', action: 'write' },
    });
    expect(res.status).toBe(201);
    const list = await call('GET', `/roles/${role.id}/policies`, { headers: asSuperAdmin() });
    expect(list.body.policies[0]).toMatchObject({
      service: 'wfs',
      operation: 'TRANSACTION',
      action: 'write',
    });
  });

  it('removes a policy (204), then 404', async () => {
    const role = await createRole();
    const res = await call('POST', `/roles/${role.id}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: '*', service: 'wms', action: 'read' },
    });
    const path = (res.headers.location as string).replace('/api/v1', '');
    expect((await call('DELETE', path, { headers: asSuperAdmin() })).status).toBe(204);
    expectError(await call('DELETE', path, { headers: asSuperAdmin() }), 404, 'policy_not_found');
    expect(
      (await call('GET', `/roles/${role.id}/policies`, { headers: asSuperAdmin() })).body.policies,
    ).toEqual([]);
  });
});

describe('a custom role with one management grant', () => {
  it('may call that operation in that workspace and nothing else', async () => {
    const ws = await createWorkspace();
    const otherWs = await createWorkspace();
    const role = await createRole();
    await call('POST', `/roles/${role.id}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: ws.id, service: 'management', operation: 'updateWorkspace', action: 'manage' },
    });
    // The local issuer's tokens carry their roles; in production a claim mapping assigns the role.
    const jwt = bearer(
      await token({ workspaces: { [ws.id]: role.id, [otherWs.id]: role.id } }, uniqueName('user')),
    );
    expect(
      (await call('PUT', `/workspaces/${ws.id}`, { headers: jwt, body: { description: 'custom' } })).status,
    ).toBe(200);
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: jwt }), 403, 'insufficient_role');
    expectError(await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: jwt }), 403);
    expectError(
      await call('PUT', `/workspaces/${otherWs.id}`, { headers: jwt, body: { description: 'no' } }),
      403,
    );
  });
});
