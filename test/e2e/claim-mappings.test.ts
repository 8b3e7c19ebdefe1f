import { describe, expect, inject, it } from 'vitest';
import { ClaimMappingBody } from '#api/schemas.ts';
import { localIssuer } from '#infra/local/files.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

/** A token from the local issuer with arbitrary claims (no trusted role claims). */
async function tokenWith(claims: Record<string, unknown>) {
  const issuer = await localIssuer(inject('host').dataDir);
  return bearer(await issuer.sign(claims, uniqueName('sub')));
}

async function map(scope: string, body: Record<string, unknown>) {
  const path = scope === '*' ? '/claim-mappings' : `/workspaces/${scope}/claim-mappings`;
  const res = await call('POST', path, { headers: asSuperAdmin(), body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

describe('createClaimMapping (spec 4.9)', () => {
  it('returns 201 with the mapping; priority defaults to 0', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const res = await call('POST', `/workspaces/${ws.name}/claim-mappings`, {
      headers: withKey(admin.key),
      body: { claim_name: 'groups', claim_value: 'gis-team', role_id: 'editor' },
    });
    expect(res.status).toBe(201);
    expect(ClaimMappingBody.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      workspace_id: ws.id,
      claim_name: 'groups',
      claim_value: 'gis-team',
      role_id: 'editor',
      priority: 0,
    });
  });

  it.each([['claim_name'], ['claim_value'], ['role_id']])('returns 400 when %s is missing', async (field) => {
    const ws = await createWorkspace();
    const body: Record<string, unknown> = { claim_name: 'groups', claim_value: 'x', role_id: 'viewer' };
    delete body[field];
    expectError(
      await call('POST', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin(), body }),
      400,
    );
  });

  it('returns 400 for an unknown role and for super_admin in a workspace mapping', async () => {
    const ws = await createWorkspace();
    const unknown = { claim_name: 'groups', claim_value: 'x', role_id: 'no-such-role' };
    expectError(
      await call('POST', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin(), body: unknown }),
      400,
      'unknown_role',
    );
    const sa = { claim_name: 'groups', claim_value: 'x', role_id: 'super_admin' };
    expectError(
      await call('POST', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin(), body: sa }),
      400,
      'invalid_role',
    );
  });

  it('returns 409 for a duplicate (claim_name, claim_value, role_id) and nothing is written twice', async () => {
    const ws = await createWorkspace();
    const body = { claim_name: 'groups', claim_value: 'dup', role_id: 'viewer' };
    await map(ws.id, body);
    expectError(
      await call('POST', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin(), body }),
      409,
      'claim_mapping_exists',
    );
    const list = await call('GET', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin() });
    expect(list.body.claim_mappings).toHaveLength(1);
  });

  it('returns 403 to editors and viewers and to admins of other workspaces', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const body = { claim_name: 'groups', claim_value: 'x', role_id: 'viewer' };
    for (const key of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      expectError(
        await call('POST', `/workspaces/${ws.id}/claim-mappings`, { headers: withKey(key.key), body }),
        403,
      );
    }
  });
});

describe('deleteClaimMapping (spec 4.10)', () => {
  it('returns 204, then 404; a mapping of another workspace is 404 and survives', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const mine = await map(ws.id, { claim_name: 'groups', claim_value: 'a', role_id: 'viewer' });
    const theirs = await map(other.id, { claim_name: 'groups', claim_value: 'b', role_id: 'viewer' });
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${theirs.id}`, { headers: asSuperAdmin() }),
      404,
      'claim_mapping_not_found',
    );
    const del = await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mine.id}`, {
      headers: asSuperAdmin(),
    });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mine.id}`, { headers: asSuperAdmin() }),
      404,
    );
    expect(
      (await call('GET', `/workspaces/${other.id}/claim-mappings`, { headers: asSuperAdmin() })).body
        .claim_mappings,
    ).toHaveLength(1);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/claim-mappings/not-a-uuid`, { headers: asSuperAdmin() }),
      400,
    );
  });
});

describe('roles from claim mappings', () => {
  it('grants a role by a plain, an array and a dotted-path claim, resolved on every request', async () => {
    const ws = await createWorkspace();
    const byGroup = await map(ws.id, { claim_name: 'groups', claim_value: 'readers', role_id: 'viewer' });
    await map(ws.id, { claim_name: 'realm_access.roles', claim_value: 'ws-admin', role_id: 'admin' });
    await map(ws.id, { claim_name: 'department', claim_value: 'gis', role_id: 'viewer' });

    const reader = await tokenWith({ groups: ['staff', 'readers'] });
    const admin = await tokenWith({ realm_access: { roles: ['ws-admin'] } });
    const plain = await tokenWith({ department: 'gis' });
    const stranger = await tokenWith({ groups: ['staff'] });

    expect((await call('GET', `/workspaces/${ws.id}`, { headers: reader })).status).toBe(200);
    expectError(await call('PUT', `/workspaces/${ws.id}`, { headers: reader, body: {} }), 403);
    expect((await call('PUT', `/workspaces/${ws.id}`, { headers: admin, body: {} })).status).toBe(200);
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: plain })).status).toBe(200);
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: stranger }), 403, 'no_workspace_access');

    const me = await call('GET', '/auth/me', { headers: reader });
    expect(me.body.workspaces).toEqual([{ id: ws.id, name: ws.name, role: 'viewer' }]);

    // A deleted mapping takes effect at once.
    await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${byGroup.id}`, { headers: asSuperAdmin() });
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: reader }), 403);
  });

  it('checks the higher priority first', async () => {
    const ws = await createWorkspace();
    await map(ws.id, { claim_name: 'groups', claim_value: 'a', role_id: 'admin', priority: 1 });
    await map(ws.id, { claim_name: 'groups', claim_value: 'b', role_id: 'viewer', priority: 10 });
    const both = await tokenWith({ groups: ['a', 'b'] });
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: both })).status).toBe(200);
    expectError(await call('PUT', `/workspaces/${ws.id}`, { headers: both, body: {} }), 403);
  });

  it('gives a custom role its policies through a mapping', async () => {
    const ws = await createWorkspace();
    const roleId = `r-${Math.random().toString(36).slice(2, 10)}`;
    await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: roleId } });
    await call('POST', `/roles/${roleId}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: ws.id, service: 'management', operation: 'listAPIKeys', action: 'manage' },
    });
    await map(ws.id, { claim_name: 'groups', claim_value: 'auditors', role_id: roleId });
    const auditor = await tokenWith({ groups: ['auditors'] });
    expect((await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: auditor })).status).toBe(200);
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: auditor }), 403);
  });

  it('makes a global super_admin mapping a super admin, and global admin reach every workspace', async () => {
    const value = uniqueName('root');
    const root = await map('*', { claim_name: 'groups', claim_value: value, role_id: 'super_admin' });
    const token = await tokenWith({ groups: [value] });
    expect((await call('GET', '/workspaces?limit=1', { headers: token })).status).toBe(200);
    expect((await call('GET', '/auth/me', { headers: token })).body.super_admin).toBe(true);
    expect((await call('DELETE', `/claim-mappings/${root.id}`, { headers: asSuperAdmin() })).status).toBe(
      204,
    );
    expectError(await call('GET', '/workspaces?limit=1', { headers: token }), 403);

    const ws = await createWorkspace();
    const viewerValue = uniqueName('all-readers');
    const global = await map('*', { claim_name: 'groups', claim_value: viewerValue, role_id: 'viewer' });
    const reader = await tokenWith({ groups: [viewerValue] });
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: reader })).status).toBe(200);
    expect((await call('GET', '/auth/me', { headers: reader })).body.global_role).toBe('viewer');
    await call('DELETE', `/claim-mappings/${global.id}`, { headers: asSuperAdmin() });
  });

  it('lists global mappings for super_admin only', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expect((await call('GET', '/claim-mappings', { headers: asSuperAdmin() })).status).toBe(200);
    expectError(await call('GET', '/claim-mappings', { headers: withKey(admin.key) }), 403);
    const body = { claim_name: 'groups', claim_value: 'x', role_id: 'viewer' };
    expectError(await call('POST', '/claim-mappings', { headers: withKey(admin.key), body }), 403);
  });
});
