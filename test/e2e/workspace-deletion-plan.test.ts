import { describe, expect, it } from 'vitest';
import { DeletionPlanBody } from '#api/deletion-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

/* getWorkspaceDeletionPlan (issue #26, ADR 0131): the plan deleteWorkspace's 409 reports, on its own. */

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** A workspace holding a style asset (a catalog item), an API key and a claim mapping. */
async function populated() {
  const ws = await createWorkspace();
  const asset = await call('PUT', `/workspaces/${ws.id}/style-assets/${uniqueName('icon')}`, {
    headers: { ...asSuperAdmin(), 'Content-Type': 'image/png' },
    body: PNG,
  });
  expect([200, 201], asset.text).toContain(asset.status);
  await createKey(ws.id, 'viewer');
  const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
    headers: asSuperAdmin(),
    body: { claim_name: 'groups', claim_value: 'plan', role_id: 'viewer' },
  });
  expect(mapping.status, mapping.text).toBe(201);
  return ws;
}

describe('getWorkspaceDeletionPlan (GET /workspaces/{workspace}/deletion-plan)', () => {
  it('answers the very plan deleteWorkspace’s 409 reports, and changes nothing', async () => {
    const ws = await populated();
    const res = await call('GET', `/workspaces/${ws.name}/deletion-plan`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(DeletionPlanBody.safeParse(res.body).success).toBe(true);
    expect(res.body.target).toEqual({ scope: 'workspace', id: ws.id, name: ws.name });
    expect(res.body.workspace_items).toMatchObject({ style_assets: 1, api_keys: 1, claim_mappings: 1 });
    const refused = await call('DELETE', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expectError(refused, 409, 'workspace_not_empty');
    expect(refused.body.plan).toEqual(res.body);
    // Reading the plan changed nothing: the workspace is still there at its version.
    const after = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(after.status).toBe(200);
    expect(after.body.version).toBe(ws.version);
  });

  it('answers an empty workspace’s plan: nothing but the workspace itself', async () => {
    const ws = await createWorkspace();
    const res = await call('GET', `/workspaces/${ws.id}/deletion-plan`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.layers.count).toBe(0);
    expect(res.body.layer_groups.count).toBe(0);
    expect(res.body.total).toBe(1);
  });

  it('returns 404 for an unknown, a malformed and a workspace being deleted', async () => {
    expectError(
      await call('GET', `/workspaces/${uniqueName()}/deletion-plan`, { headers: asSuperAdmin() }),
      404,
    );
    const ws = await populated();
    const deleting = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, { headers: asSuperAdmin() });
    expect(deleting.status, deleting.text).toBe(202);
    expectError(await call('GET', `/workspaces/${ws.id}/deletion-plan`, { headers: asSuperAdmin() }), 404);
    // A malformed name is just a workspace that doesn't exist, as for getWorkspace.
    const malformed = `/workspaces/${encodeURIComponent('no spaces!')}`;
    const sibling = await call('GET', malformed, { headers: asSuperAdmin() });
    const res = await call('GET', `${malformed}/deletion-plan`, { headers: asSuperAdmin() });
    expectError(res, 404, 'workspace_not_found');
    expect(res.status).toBe(sibling.status);
  });

  it('answers its admin 200 and, like listAPIKeys, editors, viewers and other workspaces’ admins 403', async () => {
    const ws = await populated();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const res = await call('GET', `/workspaces/${ws.id}/deletion-plan`, { headers: withKey(admin.key) });
    expect(res.status, res.text).toBe(200);
    for (const key of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      const sibling = await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: withKey(key.key) });
      const refused = await call('GET', `/workspaces/${ws.id}/deletion-plan`, { headers: withKey(key.key) });
      expectError(refused, 403);
      expect(refused.status).toBe(sibling.status);
    }
    expectError(await call('GET', `/workspaces/${ws.id}/deletion-plan`), 401);
  });
});
