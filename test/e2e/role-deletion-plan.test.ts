import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '#store/keys.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

/*
 * getRoleDeletionPlan (ADR 0135), black box against the shared local host: the claim mappings and
 * layers whose references make up a custom role's count, read from the role's reference records,
 * follow every change, and add up to what deleteRole's 409 reports.
 */

let postgis: Record<string, unknown>;
beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

const su = asSuperAdmin;

async function created(res: Promise<{ status: number; text: string; body: any }>) {
  const out = await res;
  expect(out.status, out.text).toBe(201);
  return out.body;
}

/** A role mapped by a claim mapping and allowed by two layers, with one policy. */
async function referencedRole() {
  const ws = await createWorkspace();
  const roleId = `plan-${Math.random().toString(36).slice(2, 10)}`;
  await created(call('POST', '/roles', { headers: su(), body: { id: roleId } }));
  await created(
    call('POST', `/roles/${roleId}/policies`, {
      headers: su(),
      body: { workspace: '*', service: 'wms', operation: 'GetMap', action: 'read' },
    }),
  );
  const service = await created(
    call('POST', `/workspaces/${ws.id}/services`, {
      headers: su(),
      body: { name: 'pg', type: 'postgis', connection: postgis },
    }),
  );
  const layers = [];
  for (const source of ['roads', 'places']) {
    layers.push(
      await created(
        call('POST', `/workspaces/${ws.id}/services/${service.id}/layers`, {
          headers: su(),
          body: { source_layer: source, allowed_roles: [roleId, 'viewer'], enabled: false },
        }),
      ),
    );
  }
  const mapping = await created(
    call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: su(),
      body: { claim_name: 'groups', claim_value: `g-${roleId}`, role_id: roleId },
    }),
  );
  return { ws, roleId, service, layers, mapping };
}

async function plan(roleId: string) {
  const res = await call('GET', `/roles/${roleId}/deletion-plan`, { headers: su() });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);

describe('getRoleDeletionPlan (GET /roles/{roleId}/deletion-plan)', () => {
  it('lists exactly the mapping and the layers that refer to the role, follows a change, and adds up to deleteRole’s 409', async () => {
    const { ws, roleId, service, layers, mapping } = await referencedRole();
    const first = await plan(roleId);
    expect(first).toMatchObject({
      role_id: roleId,
      deletable: false,
      references: 3,
      unrecorded: 0,
      api_keys: 0,
      sessions: 0,
    });
    expect(first.claim_mappings).toEqual([{ workspace_id: ws.id, id: mapping.id }]);
    expect([...first.layers].sort(byId)).toEqual(
      layers.map((l) => ({ workspace_id: ws.id, service_id: service.id, id: l.id })).sort(byId),
    );
    expect(first.policies).toEqual([
      expect.objectContaining({ workspace: '*', service: 'wms', action: 'read' }),
    ]);

    // One layer stops allowing the role: the plan follows.
    const [kept, changed] = layers;
    const put = await call('PUT', `/workspaces/${ws.id}/services/${service.id}/layers/${changed.id}`, {
      headers: su(),
      body: { allowed_roles: ['viewer'] },
    });
    expect(put.status, put.text).toBe(200);
    const second = await plan(roleId);
    expect(second.references).toBe(2);
    expect(second.layers).toEqual([{ workspace_id: ws.id, service_id: service.id, id: kept.id }]);
    expect(second.claim_mappings).toEqual(first.claim_mappings);

    // deleteRole's 409 counts what the plan lists, and says what it counts.
    const refused = await call('DELETE', `/roles/${roleId}`, { headers: su() });
    expectError(refused, 409, 'role_in_use');
    expect(refused.body.dependencies.references).toBe(
      second.claim_mappings.length + second.layers.length + second.unrecorded,
    );
    expect(refused.body.dependencies.references).toBe(second.references);
    expect(refused.body.detail).toMatch(/claim mappings and layers/);
    expect(refused.body.detail).toContain(`/roles/${roleId}/deletion-plan`);

    // Removing the rest empties the plan, and the role can go.
    await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mapping.id}`, { headers: su() });
    await call('DELETE', `/workspaces/${ws.id}/services/${service.id}/layers/${kept.id}`, { headers: su() });
    const last = await plan(roleId);
    expect(last).toMatchObject({
      deletable: true,
      references: 0,
      claim_mappings: [],
      layers: [],
      unrecorded: 0,
    });
    expect((await call('DELETE', `/roles/${roleId}`, { headers: su() })).status).toBe(204);
    expectError(
      await call('GET', `/roles/${roleId}/deletion-plan`, { headers: su() }),
      404,
      'role_not_found',
    );
  });

  it('lists global mappings without a workspace', async () => {
    const roleId = `plan-${Math.random().toString(36).slice(2, 10)}`;
    await created(call('POST', '/roles', { headers: su(), body: { id: roleId } }));
    const global = await created(
      call('POST', '/claim-mappings', {
        headers: su(),
        body: { claim_name: 'groups', claim_value: `g-${roleId}`, role_id: roleId },
      }),
    );
    const body = await plan(roleId);
    expect(body.claim_mappings).toEqual([{ workspace_id: null, id: global.id }]);
    expect(body.references).toBe(1);
    await call('DELETE', `/claim-mappings/${global.id}`, { headers: su() });
    expect((await plan(roleId)).claim_mappings).toEqual([]);
  });

  it('reports references without a record as unrecorded, and drops records whose referrer is gone', async () => {
    const { ws, roleId, service, layers, mapping } = await referencedRole();
    const db = hostDynamo();
    const table = inject('host').tableName;
    // A reference made before the records existed: its record is missing, its count is not.
    await db.send(
      new DeleteCommand({
        TableName: table,
        Key: keys.roleRef(roleId, { kind: 'claim_mapping', workspaceId: ws.id, id: mapping.id }),
      }),
    );
    const legacy = await plan(roleId);
    expect(legacy).toMatchObject({ references: 3, claim_mappings: [], unrecorded: 1 });
    expect(legacy.layers).toHaveLength(2);
    // A referrer removed behind the records' back (as a recursive deletion removes layers in
    // batches): its record stays, but the plan checks it and leaves it out.
    const [gone] = layers;
    await db.send(new DeleteCommand({ TableName: table, Key: keys.layer(ws.id, service.id, gone.id) }));
    const after = await plan(roleId);
    expect(after.layers.map((l: { id: string }) => l.id)).not.toContain(gone.id);
    expect(after.layers).toHaveLength(1);
    expect(after.unrecorded).toBe(2);
  });

  it('returns 400 for a built-in role, 404 for an unknown one, 403 to anyone but super_admin', async () => {
    expectError(await call('GET', '/roles/admin/deletion-plan', { headers: su() }), 400, 'system_role');
    expectError(
      await call('GET', '/roles/no-such-role/deletion-plan', { headers: su() }),
      404,
      'role_not_found',
    );
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expectError(await call('GET', '/roles/no-such-role/deletion-plan', { headers: withKey(admin.key) }), 403);
    expectError(await call('GET', '/roles/no-such-role/deletion-plan'), 401);
  });
});
