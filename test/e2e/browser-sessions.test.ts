import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { BrowserSession } from '#api/schemas.ts';
import { keys } from '#store/keys.ts';
import { type ApiResponse, asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

/*
 * listBrowserSessions and revokeBrowserSession (ADR 0134), black box against the shared local host:
 * a session signed in is listed by its public id (never its cookie or the cookie's hash), a refresh
 * keeps it one entry, and a revocation refuses its every cookie on the next request.
 */

type Cookies = Record<string, string>;
interface Listed {
  id: string;
  version: number;
  refreshed_at: string | null;
  [field: string]: unknown;
}

function jar(res: ApiResponse): Cookies {
  return Object.fromEntries(res.cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
}

const withCookie = (c: Cookies) => ({
  Cookie: `__Host-session=${c['__Host-session']}; csrf_token=${c.csrf_token}`,
});
const unsafe = (c: Cookies) => ({ ...withCookie(c), 'X-CSRF-Token': c.csrf_token as string });
const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

async function signIn(credential: string) {
  const res = await call('POST', '/auth/login', { body: { token: credential } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.session_id as string, cookies: jar(res) };
}

async function refresh(cookies: Cookies) {
  const res = await call('POST', '/auth/refresh', { headers: unsafe(cookies) });
  expect(res.status, res.text).toBe(200);
  return jar(res);
}

/** Every listed session (newest first), page by page; each page's text kept for the leak checks. */
async function listAll(limit = 1000, headers = asSuperAdmin()) {
  const sessions: Listed[] = [];
  const texts: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 200; page++) {
    const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await call('GET', `/auth/sessions?${query}`, { headers });
    expect(res.status, res.text).toBe(200);
    texts.push(res.text);
    sessions.push(...res.body.sessions);
    cursor = res.body.next_cursor;
    if (!cursor) break;
  }
  return { sessions, texts };
}

async function listed(id: string): Promise<Listed | undefined> {
  return (await listAll()).sessions.find((s) => s.id === id);
}

describe('listBrowserSessions (GET /auth/sessions)', () => {
  it('lists a new session by its public id, who holds it and when it ends — no cookie, no hash', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies } = await signIn(admin.key);
    const { sessions, texts } = await listAll();
    const mine = sessions.filter((s) => s.id === id);
    expect(mine).toHaveLength(1);
    const entry = mine[0] as Listed;
    expect(BrowserSession.safeParse(entry).success, JSON.stringify(entry)).toBe(true);
    expect(entry).toMatchObject({
      principal_id: `apikey:${admin.id}`,
      auth_method: 'apikey',
      api_key_id: admin.id,
      issuer: null,
      super_admin: false,
      workspace_roles: [{ workspace: ws.id, role: 'admin' }],
      workspace_role_count: 1,
      refreshed_at: null,
      version: 1,
    });
    expect(Date.parse(entry.expires_at as string)).toBeGreaterThan(Date.now());
    const secrets = [cookies['__Host-session'], cookies.csrf_token].flatMap((v) => [v, sha256(v as string)]);
    for (const text of texts) for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('lists a token session with its issuer and keeps one entry across a refresh (version + 1)', async () => {
    const jwt = await token({ superAdmin: true }, `sessions-${crypto.randomUUID()}`);
    const { id, cookies } = await signIn(jwt);
    const before = (await listed(id)) as Listed;
    expect(before).toMatchObject({ auth_method: 'jwt', super_admin: true, version: 1 });
    expect(before.issuer).toEqual(expect.any(String));
    const next = await refresh(cookies);
    const { sessions } = await listAll();
    const mine = sessions.filter((s) => s.id === id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ version: 2, created_at: before.created_at, issuer: before.issuer });
    expect(Date.parse(mine[0]?.refreshed_at as string)).toBeGreaterThanOrEqual(
      Date.parse(before.created_at as string),
    );
    for (const secret of [next['__Host-session'], sha256(next['__Host-session'] as string)])
      expect(JSON.stringify(sessions)).not.toContain(secret);
  });

  it('pages newest first with limit and cursor, each session once', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const older = await signIn(admin.key);
    const newer = await signIn(admin.key);
    const { sessions } = await listAll(2);
    const ids = sessions.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(older.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    const created = sessions.map((s) => s.created_at as string);
    expect([...created].sort().reverse()).toEqual(created);
    const first = await call('GET', '/auth/sessions?limit=1', { headers: asSuperAdmin() });
    expect(first.body.sessions).toHaveLength(1);
    expect(first.body.next_cursor).toEqual(expect.any(String));
  });

  it('drops a session that logged out', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies } = await signIn(admin.key);
    expect(await listed(id)).toBeDefined();
    expect((await call('POST', '/auth/logout', { headers: unsafe(cookies) })).status).toBe(204);
    expect(await listed(id)).toBeUndefined();
  });

  it('returns 400 for a bad limit or cursor and 403 to anyone but super_admin', async () => {
    expectError(await call('GET', '/auth/sessions?limit=0', { headers: asSuperAdmin() }), 400);
    expectError(
      await call('GET', '/auth/sessions?cursor=bm9wZQ', { headers: asSuperAdmin() }),
      400,
      'invalid_cursor',
    );
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expectError(await call('GET', '/auth/sessions', { headers: withKey(admin.key) }), 403);
    const { cookies } = await signIn(admin.key);
    expectError(await call('GET', '/auth/sessions', { headers: withCookie(cookies) }), 403);
    expectError(await call('GET', '/auth/sessions'), 401);
  });
});

describe('revokeBrowserSession (DELETE /auth/sessions/{session})', () => {
  it('refuses every cookie of the session on the next request, and its refresh; a second revoke is 404', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies: first } = await signIn(admin.key);
    // Refreshed once: the first pair is still in its 30 s grace, so both pairs work now.
    const next = await refresh(first);
    for (const pair of [first, next])
      expect((await call('GET', '/auth/me', { headers: withCookie(pair) })).status).toBe(200);
    const revoked = await call('DELETE', `/auth/sessions/${id}`, { headers: asSuperAdmin() });
    expect(revoked.status, revoked.text).toBe(204);
    for (const pair of [first, next]) {
      expectError(await call('GET', '/auth/me', { headers: withCookie(pair) }), 401);
      expectError(await call('GET', `/workspaces/${ws.id}`, { headers: withCookie(pair) }), 401);
      expectError(await call('POST', '/auth/refresh', { headers: unsafe(pair) }), 401);
    }
    expect(await listed(id)).toBeUndefined();
    expectError(
      await call('DELETE', `/auth/sessions/${id}`, { headers: asSuperAdmin() }),
      404,
      'session_not_found',
    );
    // The key the session stood on is untouched.
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: withKey(admin.key) })).status).toBe(200);
  });

  it('lets a super_admin revoke the session it is using (the next request is a 401)', async () => {
    const jwt = await token({ superAdmin: true }, `self-${crypto.randomUUID()}`);
    const { id, cookies } = await signIn(jwt);
    const res = await call('DELETE', `/auth/sessions/${id}`, { headers: unsafe(cookies) });
    expect(res.status, res.text).toBe(204);
    expectError(await call('GET', '/auth/me', { headers: withCookie(cookies) }), 401);
  });

  it('honours If-Match on the listed version: a stale one is 412 and the session lives on', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies } = await signIn(admin.key);
    const next = await refresh(cookies);
    expect((await listed(id))?.version).toBe(2);
    expectError(
      await call('DELETE', `/auth/sessions/${id}`, { headers: { ...asSuperAdmin(), 'If-Match': '"1"' } }),
      412,
    );
    expect((await call('GET', '/auth/me', { headers: withCookie(next) })).status).toBe(200);
    const res = await call('DELETE', `/auth/sessions/${id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"2"' },
    });
    expect(res.status, res.text).toBe(204);
    expectError(await call('GET', '/auth/me', { headers: withCookie(next) }), 401);
  });

  it('returns 400 for an id that is not a UUID, 404 for an unknown one, 403 to anyone but super_admin', async () => {
    expectError(await call('DELETE', '/auth/sessions/not-a-uuid', { headers: asSuperAdmin() }), 400);
    expectError(
      await call('DELETE', `/auth/sessions/${crypto.randomUUID()}`, { headers: asSuperAdmin() }),
      404,
      'session_not_found',
    );
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies } = await signIn(admin.key);
    expectError(await call('DELETE', `/auth/sessions/${id}`, { headers: withKey(admin.key) }), 403);
    // Not even its own session: revoking is super_admin's; logout ends one's own.
    expectError(await call('DELETE', `/auth/sessions/${id}`, { headers: unsafe(cookies) }), 403);
    expect((await call('GET', '/auth/me', { headers: withCookie(cookies) })).status).toBe(200);
    expect(await listed(id)).toBeDefined();
  });

  it('is audited: the deletion of the browser session with its caller, and a refusal', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id } = await signIn(admin.key);
    expectError(await call('DELETE', `/auth/sessions/${id}`, { headers: withKey(admin.key) }), 403);
    expect((await call('DELETE', `/auth/sessions/${id}`, { headers: asSuperAdmin() })).status).toBe(204);
    const audit = await call('GET', '/audit?operation=revokeBrowserSession&limit=1000', {
      headers: asSuperAdmin(),
    });
    expect(audit.status, audit.text).toBe(200);
    const records = audit.body.records as {
      outcome: string;
      changes: { type: string; id: string; action: string }[];
      principal: { id: string };
      status?: number;
    }[];
    const succeeded = records.find((r) => r.outcome === 'succeeded' && r.changes.some((c) => c.id === id));
    expect(succeeded?.changes).toEqual([
      expect.objectContaining({ type: 'browser_session', id, action: 'deleted' }),
    ]);
    expect(records.some((r) => r.outcome === 'refused' && r.principal.id === `apikey:${admin.id}`)).toBe(
      true,
    );
  });

  it('lists a session signed in before the listing existed from its first refresh on (ADR 0134)', async () => {
    const host = inject('host');
    const db = hostDynamo();
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { id, cookies } = await signIn(admin.key);
    // What a session of the previous version looks like: its pair, no listing entry.
    await db.send(new DeleteCommand({ TableName: host.tableName, Key: keys.browserSession(id) }));
    expect(await listed(id)).toBeUndefined();
    expectError(await call('DELETE', `/auth/sessions/${id}`, { headers: asSuperAdmin() }), 404);
    expect((await call('GET', '/auth/me', { headers: withCookie(cookies) })).status).toBe(200);
    const next = await refresh(cookies);
    const entry = await listed(id);
    expect(entry).toMatchObject({ id, api_key_id: admin.id, version: 2 });
    const stored = await db.send(new GetCommand({ TableName: host.tableName, Key: keys.browserSession(id) }));
    expect(stored.Item?.token_hash).toBe(sha256(next['__Host-session'] as string));
    expect((await call('DELETE', `/auth/sessions/${id}`, { headers: asSuperAdmin() })).status).toBe(204);
    expectError(await call('GET', '/auth/me', { headers: withCookie(next) }), 401);
    expectError(await call('GET', '/auth/me', { headers: withCookie(cookies) }), 401);
  });
});
