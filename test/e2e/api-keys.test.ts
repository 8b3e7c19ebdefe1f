import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { APIKey, APIKeyWithSecret } from '#api/schemas.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

const keysOf = (ws: string) => `/workspaces/${ws}/apikeys`;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every item of the shared table, read directly from DynamoDB Local. */
async function scanTable(): Promise<Record<string, unknown>[]> {
  const host = inject('host');
  const db = hostDynamo();
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: host.tableName, ExclusiveStartKey: start }));
    items.push(...((out.Items ?? []) as Record<string, unknown>[]));
    start = out.LastEvaluatedKey;
  } while (start);
  db.destroy();
  return items;
}

async function listAll(ws: string, limit?: number) {
  const seen: any[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const q = new URLSearchParams();
    if (limit) q.set('limit', String(limit));
    if (cursor) q.set('cursor', cursor);
    const res = await call('GET', `${keysOf(ws)}?${q}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    if (limit) expect(res.body.api_keys.length).toBeLessThanOrEqual(limit);
    seen.push(...res.body.api_keys);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  return { keys: seen, pages };
}

describe('createAPIKey', () => {
  it('returns 201 with the full key once, its 12-character prefix, role, owner fields and expiry', async () => {
    // Prepare
    const ws = await createWorkspace();
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    // Act
    const res = await call('POST', keysOf(ws.id), {
      headers: asSuperAdmin(),
      body: {
        name: 'ci',
        role_id: 'editor',
        expires_at: expires,
        owner_email: 'ci@example.com',
        owner_name: 'CI bot',
      },
    });
    // Assess
    expect(res.status, res.text).toBe(201);
    expect(APIKeyWithSecret.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body.key).toMatch(/^gpk_[A-Za-z0-9_-]{43}$/);
    expect(res.body.key_prefix).toBe(res.body.key.slice(0, 12));
    expect(res.body).toMatchObject({
      name: 'ci',
      role_id: 'editor',
      revoked: false,
      expires_at: expires,
      owner_email: 'ci@example.com',
      owner_name: 'CI bot',
      workspace_id: ws.id,
    });
    expect(res.body).not.toHaveProperty('key_hash');
    expect(res.text).not.toContain(sha256(res.body.key));
    expect(res.headers.location).toBe(`/api/v1/workspaces/${ws.id}/apikeys/${res.body.id}`);
  });

  it.each([['admin'], ['editor'], ['viewer']] as const)(
    'creates a %s key that authenticates at once',
    async (role) => {
      // Prepare
      const ws = await createWorkspace();
      // Act
      const key = await createKey(ws.name, role);
      const me = await call('GET', '/auth/me', { headers: withKey(key.key) });
      // Assess
      expect(me.status, me.text).toBe(200);
      expect(me.body).toMatchObject({
        auth_method: 'apikey',
        super_admin: false,
        api_key_id: key.id,
        workspaces: [{ id: ws.id, name: ws.name, role }],
      });
    },
  );

  it('mints a different key each time', async () => {
    const ws = await createWorkspace();
    const a = await createKey(ws.id, 'viewer');
    const b = await createKey(ws.id, 'viewer');
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it.each([
    ['a missing name', { role_id: 'viewer' }, 'validation_failed', 'body.name'],
    ['an empty name', { name: '', role_id: 'viewer' }, 'validation_failed', 'body.name'],
    ['a missing role_id', { name: 'k' }, 'validation_failed', 'body.role_id'],
    ['role_id super_admin', { name: 'k', role_id: 'super_admin' }, 'validation_failed', 'body.role_id'],
    ['role_id owner', { name: 'k', role_id: 'owner' }, 'validation_failed', 'body.role_id'],
    ['role_id Admin (case)', { name: 'k', role_id: 'Admin' }, 'validation_failed', 'body.role_id'],
    [
      'expires_at that is not a date-time',
      { name: 'k', role_id: 'viewer', expires_at: 'tomorrow' },
      'validation_failed',
      'body.expires_at',
    ],
    [
      'expires_at that is only a date',
      { name: 'k', role_id: 'viewer', expires_at: '2099-01-01' },
      'validation_failed',
      'body.expires_at',
    ],
    [
      'expires_at in the past',
      { name: 'k', role_id: 'viewer', expires_at: '2020-01-01T00:00:00Z' },
      'expires_at_in_past',
      undefined,
    ],
    [
      'an invalid owner_email',
      { name: 'k', role_id: 'viewer', owner_email: 'nope' },
      'validation_failed',
      'body.owner_email',
    ],
    ['an unknown field', { name: 'k', role_id: 'viewer', scope: 'all' }, 'validation_failed', 'body'],
    [
      'a client-chosen key',
      { name: 'k', role_id: 'viewer', key: `gpk_${'a'.repeat(43)}` },
      'validation_failed',
      'body',
    ],
  ])('returns 400 for %s and creates no key', async (_case, body, reason, path) => {
    // Prepare
    const ws = await createWorkspace();
    // Act
    const res = await call('POST', keysOf(ws.id), { headers: asSuperAdmin(), body });
    // Assess
    expectError(res, 400, reason);
    if (path) expect(res.body.issues.map((i: { path: string }) => i.path)).toContain(path);
    expect((await listAll(ws.id)).keys).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"name":"k",', 'malformed_json'],
    ['an empty body', '', 'body_required'],
    ['a JSON array', '[]', 'validation_failed'],
    ['JSON null', 'null', 'validation_failed'],
  ])('returns 400 for %s', async (_case, body, reason) => {
    const ws = await createWorkspace();
    const res = await call('POST', keysOf(ws.id), {
      headers: { ...asSuperAdmin(), 'Content-Type': 'application/json' },
      body,
    });
    expectError(res, 400, reason);
    expect((await listAll(ws.id)).keys).toEqual([]);
  });

  it('lets the workspace admin create a key', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const res = await call('POST', keysOf(ws.name), {
      headers: withKey(admin.key),
      body: { name: 'by-admin', role_id: 'viewer' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.workspace_id).toBe(ws.id);
  });

  it.each([['editor'], ['viewer']] as const)('returns 403 to a %s key and creates nothing', async (role) => {
    // Prepare
    const ws = await createWorkspace();
    const caller = await createKey(ws.id, role);
    // Act
    const res = await call('POST', keysOf(ws.id), {
      headers: withKey(caller.key),
      body: { name: 'escalate', role_id: 'admin' },
    });
    // Assess
    expectError(res, 403, 'insufficient_role');
    expect((await listAll(ws.id)).keys.map((k) => k.id)).toEqual([caller.id]);
  });

  it('returns 403 to the admin of another workspace', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const outsider = await createKey(other.id, 'admin');
    const res = await call('POST', keysOf(ws.id), {
      headers: withKey(outsider.key),
      body: { name: 'x', role_id: 'admin' },
    });
    expectError(res, 403, 'no_workspace_access');
    expect((await listAll(ws.id)).keys).toEqual([]);
  });

  it('returns 404 to super_admin and 403 to others for an unknown workspace', async () => {
    const other = await createWorkspace();
    const outsider = await createKey(other.id, 'admin');
    const body = { name: 'x', role_id: 'viewer' };
    expectError(
      await call('POST', keysOf('no-such-ws-4f1c'), { headers: asSuperAdmin(), body }),
      404,
      'workspace_not_found',
    );
    expectError(
      await call('POST', keysOf('2b0e7a54-7d1e-4c8e-9d4a-000000000000'), { headers: asSuperAdmin(), body }),
      404,
      'workspace_not_found',
    );
    expectError(
      await call('POST', keysOf('no-such-ws-4f1c'), { headers: withKey(outsider.key), body }),
      403,
      'no_workspace_access',
    );
  });

  it('stores only the SHA-256 hash of the key, never the key itself', async () => {
    // Prepare
    const ws = await createWorkspace();
    // Act
    const key = await createKey(ws.id, 'viewer', { owner_name: 'hash-check' });
    const items = await scanTable();
    // Assess
    const texts = items.map((i) => JSON.stringify(i));
    const secretPart = key.key.slice(4);
    expect(texts.filter((t) => t.includes(key.key))).toEqual([]);
    expect(texts.filter((t) => t.includes(secretPart))).toEqual([]);
    expect(texts.filter((t) => t.includes(sha256(key.key))).length).toBeGreaterThanOrEqual(1);
    const bootstrap = inject('host').apiKey;
    expect(texts.filter((t) => t.includes(bootstrap.slice(4)))).toEqual([]);
    expect(texts.some((t) => t.includes(sha256(bootstrap)))).toBe(true);
  });
});

describe('listAPIKeys and getAPIKey', () => {
  it('lists keys with their prefix but never the key or its hash', async () => {
    // Prepare
    const ws = await createWorkspace();
    const created = [await createKey(ws.id, 'admin'), await createKey(ws.id, 'viewer')];
    // Act
    const res = await call('GET', keysOf(ws.name), { headers: asSuperAdmin() });
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.api_keys).toHaveLength(2);
    for (const k of res.body.api_keys) {
      expect(APIKey.safeParse(k).success, JSON.stringify(k)).toBe(true);
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('key_hash');
    }
    for (const c of created) {
      expect(res.text).not.toContain(c.key.slice(4));
      expect(res.text).not.toContain(sha256(c.key));
      expect(res.body.api_keys).toContainEqual(
        expect.objectContaining({ id: c.id, key_prefix: c.key_prefix, role_id: c.role_id }),
      );
    }
    expect(res.body).not.toHaveProperty('next_cursor');
  });

  it('pages through every key with limit and cursor', async () => {
    // Prepare
    const ws = await createWorkspace();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createKey(ws.id, 'viewer'));
    // Act
    const { keys, pages } = await listAll(ws.id, 2);
    // Assess
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(keys.map((k) => k.id).sort()).toEqual(created.map((k) => k.id).sort());
  });

  it('returns only the keys of the addressed workspace', async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const keyA = await createKey(a.id, 'viewer');
    await createKey(b.id, 'viewer');
    const { keys } = await listAll(a.id);
    expect(keys.map((k) => k.id)).toEqual([keyA.id]);
  });

  it.each([['?limit=0'], ['?limit=1001'], ['?limit=x'], ['?cursor=garbage'], ['?unknown=1']])(
    'returns 400 for %s',
    async (q) => {
      const ws = await createWorkspace();
      expectError(await call('GET', `${keysOf(ws.id)}${q}`, { headers: asSuperAdmin() }), 400);
    },
  );

  it("returns 400 invalid_cursor for another workspace's cursor instead of failing", async () => {
    // Prepare
    const a = await createWorkspace();
    const b = await createWorkspace();
    await createKey(a.id, 'viewer');
    await createKey(a.id, 'viewer');
    await createKey(b.id, 'viewer');
    const pageOfA = await call('GET', `${keysOf(a.id)}?limit=1`, { headers: asSuperAdmin() });
    const pageOfWorkspaces = await call('GET', '/workspaces?limit=1', { headers: asSuperAdmin() });
    expect(pageOfA.body.next_cursor).toEqual(expect.any(String));
    expect(pageOfWorkspaces.body.next_cursor).toEqual(expect.any(String));
    // Act
    const foreign = await call('GET', `${keysOf(b.id)}?cursor=${pageOfA.body.next_cursor}`, {
      headers: asSuperAdmin(),
    });
    const ofWorkspaces = await call('GET', `${keysOf(b.id)}?cursor=${pageOfWorkspaces.body.next_cursor}`, {
      headers: asSuperAdmin(),
    });
    // Assess
    expectError(foreign, 400, 'invalid_cursor');
    expectError(ofWorkspaces, 400, 'invalid_cursor');
  });

  it('reads one key without the key or its hash', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'editor', { owner_email: 'o@example.com' });
    const res = await call('GET', `${keysOf(ws.name)}/${key.id}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(APIKey.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body).toMatchObject({
      id: key.id,
      key_prefix: key.key_prefix,
      role_id: 'editor',
      revoked: false,
      owner_email: 'o@example.com',
      workspace_id: ws.id,
    });
    expect(res.body).not.toHaveProperty('key');
    expect(res.text).not.toContain(key.key.slice(4));
    expect(res.text).not.toContain(sha256(key.key));
  });

  it('finds a key by its id in upper case, as UUIDs compare case-insensitively', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    const res = await call('GET', `${keysOf(ws.id)}/${key.id.toUpperCase()}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).toBe(key.id);
  });

  it('returns 404 for a key of another workspace, to super_admin and to the admin', async () => {
    // Prepare
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const foreign = await createKey(other.id, 'viewer');
    // Act
    const asSuper = await call('GET', `${keysOf(ws.id)}/${foreign.id}`, { headers: asSuperAdmin() });
    const asAdmin = await call('GET', `${keysOf(ws.id)}/${foreign.id}`, { headers: withKey(admin.key) });
    // Assess
    expectError(asSuper, 404, 'api_key_not_found');
    expectError(asAdmin, 404, 'api_key_not_found');
  });

  it('returns 404 for an unknown key id', async () => {
    const ws = await createWorkspace();
    expectError(
      await call('GET', `${keysOf(ws.id)}/0d4c5f1e-9b1a-4f7e-8e3b-2a6c1d9e8f70`, { headers: asSuperAdmin() }),
      404,
      'api_key_not_found',
    );
  });

  it.each([
    ['GET', 'not-a-uuid'],
    ['GET', '12345'],
    ['DELETE', 'not-a-uuid'],
  ])('%s returns 400 when keyId is %j', async (method, keyId) => {
    const ws = await createWorkspace();
    const res = await call(method, `${keysOf(ws.id)}/${keyId}`, { headers: asSuperAdmin() });
    expectError(res, 400, 'validation_failed');
    expect(res.body.issues[0].path).toBe('path.keyId');
  });
});

describe('revokeAPIKey', () => {
  it('returns 204 with an empty body and the key stops working on the next request', async () => {
    // Prepare
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'admin');
    expect((await call('GET', '/auth/me', { headers: withKey(key.key) })).status).toBe(200);
    // Act
    const res = await call('DELETE', `${keysOf(ws.id)}/${key.id}`, { headers: asSuperAdmin() });
    // Assess
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('GET', '/auth/me', { headers: withKey(key.key) }), 401, 'unauthenticated');
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers: withKey(key.key) }), 401);
  });

  it('lets a key revoke itself (admin), after which it is refused', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'admin');
    const res = await call('DELETE', `${keysOf(ws.id)}/${key.id}`, { headers: withKey(key.key) });
    expect(res.status).toBe(204);
    expectError(await call('GET', keysOf(ws.id), { headers: withKey(key.key) }), 401);
  });

  it('answers 204 again when revoking a revoked key and keeps it revoked', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    expect((await call('DELETE', `${keysOf(ws.id)}/${key.id}`, { headers: asSuperAdmin() })).status).toBe(
      204,
    );
    const again = await call('DELETE', `${keysOf(ws.name)}/${key.id}`, { headers: asSuperAdmin() });
    expect(again.status).toBe(204);
    expect(again.text).toBe('');
    expectError(await call('GET', '/auth/me', { headers: withKey(key.key) }), 401);
  });

  it('shows the key as revoked in get and list, and leaves other keys working', async () => {
    const ws = await createWorkspace();
    const revoked = await createKey(ws.id, 'viewer');
    const kept = await createKey(ws.id, 'viewer');
    await call('DELETE', `${keysOf(ws.id)}/${revoked.id}`, { headers: asSuperAdmin() });
    const got = await call('GET', `${keysOf(ws.id)}/${revoked.id}`, { headers: asSuperAdmin() });
    expect(got.status).toBe(200);
    expect(got.body.revoked).toBe(true);
    const { keys } = await listAll(ws.id);
    expect(keys.find((k) => k.id === revoked.id)?.revoked).toBe(true);
    expect(keys.find((k) => k.id === kept.id)?.revoked).toBe(false);
    expect((await call('GET', '/auth/me', { headers: withKey(kept.key) })).status).toBe(200);
  });

  it('returns 404 for an unknown key and for a key of another workspace, which keeps working', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const foreign = await createKey(other.id, 'viewer');
    expectError(
      await call('DELETE', `${keysOf(ws.id)}/0d4c5f1e-9b1a-4f7e-8e3b-2a6c1d9e8f70`, {
        headers: asSuperAdmin(),
      }),
      404,
      'api_key_not_found',
    );
    expectError(
      await call('DELETE', `${keysOf(ws.id)}/${foreign.id}`, { headers: asSuperAdmin() }),
      404,
      'api_key_not_found',
    );
    expect((await call('GET', '/auth/me', { headers: withKey(foreign.key) })).status).toBe(200);
  });

  it('refuses an expired key with 401', async () => {
    // Prepare
    const ws = await createWorkspace();
    const expiresAt = Date.now() + 2000;
    const key = await createKey(ws.id, 'admin', { expires_at: new Date(expiresAt).toISOString() });
    expect((await call('GET', '/auth/me', { headers: withKey(key.key) })).status).toBe(200);
    // Act
    await wait(expiresAt - Date.now() + 300);
    const res = await call('GET', '/auth/me', { headers: withKey(key.key) });
    // Assess
    expectError(res, 401, 'unauthenticated');
    expectError(await call('GET', keysOf(ws.id), { headers: withKey(key.key) }), 401, 'unauthenticated');
  });
});
