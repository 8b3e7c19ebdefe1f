import { describe, expect, it } from 'vitest';
import { ClaimMappingBody } from '#api/schemas.ts';
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

describe('deleteAPIKey (DELETE /workspaces/{workspace}/apikeys/{keyId}/permanent)', () => {
  const revoke = async (ws: string, id: string) => {
    const res = await call('DELETE', `/workspaces/${ws}/apikeys/${id}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(204);
  };

  it('deletes a revoked key for good: 204, then getAPIKey 404, gone from the list, the secret still refused', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    const kept = await createKey(ws.id, 'viewer');
    await revoke(ws.id, key.id);
    const del = await call('DELETE', `/workspaces/${ws.name}/apikeys/${key.id}/permanent`, {
      headers: asSuperAdmin(),
    });
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expectError(
      await call('GET', `/workspaces/${ws.id}/apikeys/${key.id}`, { headers: asSuperAdmin() }),
      404,
      'api_key_not_found',
    );
    const list = await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: asSuperAdmin() });
    expect(list.body.api_keys.map((k: { id: string }) => k.id)).toEqual([kept.id]);
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: withKey(key.key) }), 401);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/apikeys/${key.id}/permanent`, { headers: asSuperAdmin() }),
      404,
      'api_key_not_found',
    );
  });

  it('returns 409 api_key_not_revoked for an active key, which keeps working', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/apikeys/${key.id}/permanent`, { headers: asSuperAdmin() }),
      409,
      'api_key_not_revoked',
    );
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: withKey(key.key) })).status).toBe(200);
    expect(
      (await call('GET', `/workspaces/${ws.id}/apikeys/${key.id}`, { headers: asSuperAdmin() })).body.revoked,
    ).toBe(false);
  });

  it('honours If-Match: 412 on another version, 204 on the revoked key’s own', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    await revoke(ws.id, key.id);
    const current = await call('GET', `/workspaces/${ws.id}/apikeys/${key.id}`, { headers: asSuperAdmin() });
    const path = `/workspaces/${ws.id}/apikeys/${key.id}/permanent`;
    expectError(await call('DELETE', path, { headers: { ...asSuperAdmin(), 'If-Match': '"1"' } }), 412);
    const del = await call('DELETE', path, {
      headers: { ...asSuperAdmin(), 'If-Match': current.headers.etag as string },
    });
    expect(del.status, del.text).toBe(204);
  });

  it('is audited like the other key operations: the deletion and a refusal', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    const active = await createKey(ws.id, 'viewer');
    await revoke(ws.id, key.id);
    await call('DELETE', `/workspaces/${ws.id}/apikeys/${key.id}/permanent`, { headers: asSuperAdmin() });
    await call('DELETE', `/workspaces/${ws.id}/apikeys/${active.id}/permanent`, { headers: asSuperAdmin() });
    const audit = await call('GET', `/workspaces/${ws.id}/audit?operation=deleteAPIKey`, {
      headers: asSuperAdmin(),
    });
    expect(audit.status, audit.text).toBe(200);
    const succeeded = audit.body.records.find((r: { outcome: string }) => r.outcome === 'succeeded');
    expect(succeeded.changes).toEqual([
      { type: 'api_key', id: key.id, workspace_id: ws.id, action: 'deleted' },
    ]);
    const refused = audit.body.records.find((r: { outcome: string }) => r.outcome === 'refused');
    expect(refused).toMatchObject({ status: 409, reason: 'api_key_not_revoked' });
  });

  it('returns 404 for an unknown key and a key of another workspace (which survives), 400 for a bad id', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const theirs = await createKey(other.id, 'viewer');
    await revoke(other.id, theirs.id);
    for (const id of [crypto.randomUUID(), theirs.id]) {
      expectError(
        await call('DELETE', `/workspaces/${ws.id}/apikeys/${id}/permanent`, { headers: asSuperAdmin() }),
        404,
        'api_key_not_found',
      );
    }
    expect(
      (await call('GET', `/workspaces/${other.id}/apikeys/${theirs.id}`, { headers: asSuperAdmin() })).status,
    ).toBe(200);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/apikeys/not-a-uuid/permanent`, { headers: asSuperAdmin() }),
      400,
    );
  });

  it('answers its admin 204 and, like revokeAPIKey, editors, viewers and other workspaces’ admins 403', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    await revoke(ws.id, key.id);
    const path = `/workspaces/${ws.id}/apikeys/${key.id}/permanent`;
    for (const caller of [
      await createKey(ws.id, 'editor'),
      await createKey(ws.id, 'viewer'),
      await createKey(other.id, 'admin'),
    ]) {
      const sibling = await call('DELETE', `/workspaces/${ws.id}/apikeys/${key.id}`, {
        headers: withKey(caller.key),
      });
      const res = await call('DELETE', path, { headers: withKey(caller.key) });
      expectError(res, 403);
      expect(res.status).toBe(sibling.status);
    }
    expectError(await call('DELETE', path), 401);
    const admin = await createKey(ws.id, 'admin');
    expect((await call('DELETE', path, { headers: withKey(admin.key) })).status).toBe(204);
  });
});
