import { describe, expect, it } from 'vitest';
import { ClaimMappingBody } from '../../shared/api/schemas.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

/*
 * The small operations of issue #26 (ADR 0131), black box against the shared local host: each with
 * its success, its permission matrix (as its sibling operations answer it), bad input and not found.
 */

async function map(scope: string, body: Record<string, unknown>) {
  const path = scope === '*' ? '/claim-mappings' : `/workspaces/${scope}/claim-mappings`;
  const res = await call('POST', path, { headers: asSuperAdmin(), body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

describe('getClaimMapping (GET /workspaces/{workspace}/claim-mappings/{mappingId})', () => {
  it('returns 200 with the mapping as the list shows it, and ETag "1"', async () => {
    const ws = await createWorkspace();
    const created = await map(ws.id, {
      claim_name: 'groups',
      claim_value: 'gis',
      role_id: 'editor',
      priority: 7,
    });
    const res = await call('GET', `/workspaces/${ws.name}/claim-mappings/${created.id}`, {
      headers: asSuperAdmin(),
    });
    expect(res.status, res.text).toBe(200);
    expect(ClaimMappingBody.safeParse(res.body).success).toBe(true);
    expect(res.headers.etag).toBe('"1"');
    const list = await call('GET', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin() });
    expect(res.body).toEqual(list.body.claim_mappings[0]);
    expect(res.body).toMatchObject({ id: created.id, workspace_id: ws.id, role_id: 'editor', priority: 7 });
  });

  it('accepts the id in upper case', async () => {
    const ws = await createWorkspace();
    const created = await map(ws.id, { claim_name: 'groups', claim_value: 'up', role_id: 'viewer' });
    const res = await call('GET', `/workspaces/${ws.id}/claim-mappings/${created.id.toUpperCase()}`, {
      headers: asSuperAdmin(),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).toBe(created.id);
  });

  it('returns 404 for an unknown id, a mapping of another workspace and a global mapping', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const theirs = await map(other.id, { claim_name: 'groups', claim_value: 'b', role_id: 'viewer' });
    const global = await map('*', { claim_name: 'groups', claim_value: `g-${ws.id}`, role_id: 'viewer' });
    for (const id of [crypto.randomUUID(), theirs.id, global.id]) {
      expectError(
        await call('GET', `/workspaces/${ws.id}/claim-mappings/${id}`, { headers: asSuperAdmin() }),
        404,
        'claim_mapping_not_found',
      );
    }
    await call('DELETE', `/claim-mappings/${global.id}`, { headers: asSuperAdmin() });
  });

  it('returns 404 once the mapping is deleted', async () => {
    const ws = await createWorkspace();
    const created = await map(ws.id, { claim_name: 'groups', claim_value: 'gone', role_id: 'viewer' });
    await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${created.id}`, { headers: asSuperAdmin() });
    expectError(
      await call('GET', `/workspaces/${ws.id}/claim-mappings/${created.id}`, { headers: asSuperAdmin() }),
      404,
    );
  });

  it('returns 400 when mappingId is not a UUID', async () => {
    const ws = await createWorkspace();
    expectError(
      await call('GET', `/workspaces/${ws.id}/claim-mappings/not-a-uuid`, { headers: asSuperAdmin() }),
      400,
    );
  });

  it('answers the admin 200 and, like listClaimMappings, editors, viewers and other workspaces 403', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const created = await map(ws.id, { claim_name: 'groups', claim_value: 'perm', role_id: 'viewer' });
    const path = `/workspaces/${ws.id}/claim-mappings/${created.id}`;
    const admin = await createKey(ws.id, 'admin');
    expect((await call('GET', path, { headers: withKey(admin.key) })).status).toBe(200);
    for (const key of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      const sibling = await call('GET', `/workspaces/${ws.id}/claim-mappings`, { headers: withKey(key.key) });
      const res = await call('GET', path, { headers: withKey(key.key) });
      expectError(res, 403);
      expect(res.status).toBe(sibling.status);
    }
    expectError(await call('GET', path), 401);
  });
});
