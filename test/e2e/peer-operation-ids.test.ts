import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { hostPostgis } from '../support/data-plane.ts';
import { bearer, createWorkspace, expectError, token } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

/*
 * The peer's operation ids (issue #26, ADR 0132): a role policy stored before the rename names the
 * old id and still grants the renamed operation, and only it; adding a policy with an old id
 * stores the new one.
 */

const roleId = () => `r-${Math.random().toString(36).slice(2, 10)}`;

/** Writes a management policy exactly as addRolePolicy stored it before the rename. */
async function plantLegacyPolicy(role: string, workspace: string, operation: string, action: string) {
  const { keys, entities } = await import('#store/keys.ts');
  const { policyId } = await import('#domain/roles.ts');
  const rule = { workspace, service: 'management' as const, operation, action: action as 'manage' };
  const id = policyId(rule);
  await hostDynamo().send(
    new PutCommand({
      TableName: inject('host').tableName,
      Item: {
        ...keys.rolePolicy(role, id),
        entity: entities.rolePolicy,
        id,
        ...rule,
        created_at: new Date().toISOString(),
      },
    }),
  );
  return id;
}

async function setUp() {
  const ws = await createWorkspace();
  const role = roleId();
  expect((await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: role } })).status).toBe(201);
  // A draft service (nothing is validated or connected when it is stored).
  const service = await call('POST', `/workspaces/${ws.id}/services`, {
    headers: asSuperAdmin(),
    body: { name: uniqueName('svc'), type: 'postgis', enabled: false, connection: hostPostgis() },
  });
  expect(service.status, service.text).toBe(201);
  const jwt = bearer(await token({ workspaces: { [ws.id]: role } }, uniqueName('user')));
  return { ws, role, service: service.body as { id: string }, jwt };
}

describe('a role policy stored under an old operation id', () => {
  it('testServiceConnection still grants testExistingServiceConnection, and nothing more', async () => {
    const { ws, role, service, jwt } = await setUp();
    const testIt = () =>
      call('POST', `/workspaces/${ws.id}/services/${service.id}/test-connection`, { headers: jwt });
    expectError(await testIt(), 403, 'insufficient_role');

    const id = await plantLegacyPolicy(role, ws.id, 'testServiceConnection', 'manage');
    const tested = await testIt();
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body).toMatchObject({ ok: expect.any(Boolean) });
    // Other manage operations, on the same service and in the workspace, stay refused.
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/services/${service.id}`, { headers: jwt }),
      403,
      'insufficient_role',
    );
    expectError(
      await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: jwt }),
      403,
      'insufficient_role',
    );

    // Listed under the new id; removed by its stored id, after which the grant is gone.
    const listed = await call('GET', `/roles/${role}/policies`, { headers: asSuperAdmin() });
    expect(listed.body.policies).toEqual([
      expect.objectContaining({ id, service: 'management', operation: 'testExistingServiceConnection' }),
    ]);
    expect((await call('DELETE', `/roles/${role}/policies/${id}`, { headers: asSuperAdmin() })).status).toBe(
      204,
    );
    expectError(await testIt(), 403, 'insufficient_role');
  });
});

describe('addRolePolicy with an old operation id', () => {
  it('stores the new id, so naming the old and the new id is one policy', async () => {
    const ws = await createWorkspace();
    const role = roleId();
    expect((await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: role } })).status).toBe(201);
    const add = (operation: string) =>
      call('POST', `/roles/${role}/policies`, {
        headers: asSuperAdmin(),
        body: { workspace: ws.id, service: 'management', operation, action: 'write' },
      });
    const old = await add('putImportPlan');
    expect(old.status, old.text).toBe(201);
    expect((await add('setImportPlan')).status).toBe(201);
    const listed = await call('GET', `/roles/${role}/policies`, { headers: asSuperAdmin() });
    expect(listed.body.policies).toEqual([
      expect.objectContaining({ workspace: ws.id, operation: 'setImportPlan', action: 'write' }),
    ]);
    expectError(await add('putImportPlanX'), 422, 'invalid_policy');
  });
});
