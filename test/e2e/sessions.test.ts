import { describe, expect, inject, it } from 'vitest';
import { AuthConsoleConfig, AuthMe } from '#api/schemas.ts';
import { type ApiResponse, asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';
import { onSharedTable, startHostProcess } from '../support/host-process.ts';

/** Cookie name → value from Set-Cookie headers. */
function jar(res: ApiResponse): Record<string, string> {
  return Object.fromEntries(res.cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
}

function cookieHeader(cookies: Record<string, string>): Record<string, string> {
  return { Cookie: `__Host-session=${cookies['__Host-session']}; csrf_token=${cookies.csrf_token}` };
}

async function loginWith(credential: string) {
  const res = await call('POST', '/auth/login', { body: { token: credential } });
  expect(res.status, res.text).toBe(201);
  return { res, cookies: jar(res) };
}

describe('login', () => {
  it('exchanges an API key for a session: 201 AuthMe and both cookies with the right attributes', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { res, cookies } = await loginWith(admin.key);
    expect(AuthMe.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      auth_method: 'apikey',
      api_key_id: admin.id,
      session_id: expect.any(String),
    });
    expect(res.body.workspaces).toEqual([{ id: ws.id, name: ws.name, role: 'admin' }]);
    const session = res.cookies.find((c) => c.startsWith('__Host-session='));
    const csrf = res.cookies.find((c) => c.startsWith('csrf_token='));
    expect(session).toMatch(/; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=\d+/);
    expect(csrf).toMatch(/; Path=\/; Secure; SameSite=Lax/);
    expect(csrf).not.toMatch(/HttpOnly/);
    expect(cookies['__Host-session']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await call('GET', '/auth/me', { headers: cookieHeader(cookies) });
    expect(me.status).toBe(200);
    expect(me.body.session_id).toBe(res.body.session_id);
    expect(Date.parse(me.body.session_expires_at)).toBeGreaterThan(Date.now());
  });

  it('exchanges a JWT for a session', async () => {
    const jwt = await token({ superAdmin: true }, 'console-user');
    const { res, cookies } = await loginWith(jwt);
    expect(res.body).toMatchObject({ auth_method: 'jwt', principal: 'console-user', super_admin: true });
    expect((await call('GET', '/workspaces?limit=1', { headers: cookieHeader(cookies) })).status).toBe(200);
  });

  it('returns 401 for a bad credential and 400 for a bad body', async () => {
    expectError(await call('POST', '/auth/login', { body: { token: 'gpk_notakey' } }), 401);
    expectError(await call('POST', '/auth/login', { body: { token: 'not.a.jwt' } }), 401);
    expectError(await call('POST', '/auth/login', { body: {} }), 400);
  });
});

describe('session use and CSRF', () => {
  it('needs X-CSRF-Token equal to the csrf cookie on unsafe methods (403 otherwise)', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies } = await loginWith(admin.key);
    const body = { description: 'via session' };
    expectError(
      await call('PUT', `/workspaces/${ws.id}`, { headers: cookieHeader(cookies), body }),
      403,
      'csrf_failed',
    );
    expectError(
      await call('PUT', `/workspaces/${ws.id}`, {
        headers: { ...cookieHeader(cookies), 'X-CSRF-Token': 'wrong' },
        body,
      }),
      403,
      'csrf_failed',
    );
    const ok = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...cookieHeader(cookies), 'X-CSRF-Token': cookies.csrf_token as string },
      body,
    });
    expect(ok.status).toBe(200);
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: cookieHeader(cookies) })).status).toBe(200);
  });

  it('lets an explicit credential win and never falls back to the cookie', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies } = await loginWith(admin.key);
    expectError(
      await call('GET', `/workspaces/${ws.id}`, {
        headers: { ...cookieHeader(cookies), 'X-API-Key': 'gpk_bad' },
      }),
      401,
    );
    const viewer = await createKey(ws.id, 'viewer');
    const res = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...cookieHeader(cookies), ...withKey(viewer.key) },
      body: {},
    });
    expectError(res, 403, 'insufficient_role');
  });

  it('ends the session when its API key is revoked', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies } = await loginWith(admin.key);
    await call('DELETE', `/workspaces/${ws.id}/apikeys/${admin.id}`, { headers: asSuperAdmin() });
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(cookies) }), 401);
  });

  it('rejects an unknown session cookie with 401', async () => {
    expectError(
      await call('GET', '/auth/me', { headers: { Cookie: '__Host-session=AAAA; csrf_token=BBBB' } }),
      401,
    );
  });
});

describe('refreshSession (spec 4.16)', () => {
  it('rotates both values; the previous pair stays valid for the grace period; headers are 400', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { res: first, cookies } = await loginWith(admin.key);
    const refreshed = await call('POST', '/auth/refresh', {
      headers: { ...cookieHeader(cookies), 'X-CSRF-Token': cookies.csrf_token as string },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(AuthMe.safeParse(refreshed.body).success).toBe(true);
    expect(refreshed.body.session_id).toBe(first.body.session_id);
    const next = jar(refreshed);
    expect(next['__Host-session']).not.toBe(cookies['__Host-session']);
    expect(next.csrf_token).not.toBe(cookies.csrf_token);
    // Both pairs work now (the old one for 30 s).
    expect((await call('GET', '/auth/me', { headers: cookieHeader(next) })).status).toBe(200);
    expect((await call('GET', '/auth/me', { headers: cookieHeader(cookies) })).status).toBe(200);
    // The old pair can't be refreshed again.
    expectError(
      await call('POST', '/auth/refresh', {
        headers: { ...cookieHeader(cookies), 'X-CSRF-Token': cookies.csrf_token as string },
      }),
      409,
      'session_already_refreshed',
    );
    expectError(
      await call('POST', '/auth/refresh', { headers: withKey(admin.key) }),
      400,
      'session_required',
    );
    expectError(await call('POST', '/auth/refresh', { headers: cookieHeader(next) }), 403, 'csrf_failed');
  });

  it('gives exactly one 200 among 8 concurrent refreshes of one session, the rest 409', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies } = await loginWith(admin.key);
    const headers = { ...cookieHeader(cookies), 'X-CSRF-Token': cookies.csrf_token as string };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call('POST', '/auth/refresh', { headers })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409);
  });

  it('returns 401 without any credential', async () => {
    expectError(await call('POST', '/auth/refresh'), 401);
  });
});

describe('logout', () => {
  it('ends the session (204, cookies cleared) so the cookie is refused afterwards', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies } = await loginWith(admin.key);
    const out = await call('POST', '/auth/logout', {
      headers: { ...cookieHeader(cookies), 'X-CSRF-Token': cookies.csrf_token as string },
    });
    expect(out.status).toBe(204);
    expect(out.cookies.some((c) => c.startsWith('__Host-session=;') && c.includes('Max-Age=0'))).toBe(true);
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(cookies) }), 401);
  });

  /** A session refreshed once: its first pair (in its 30 s grace) and the pair that replaced it. */
  async function refreshedSession() {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const { cookies: first } = await loginWith(admin.key);
    const refreshed = await call('POST', '/auth/refresh', {
      headers: { ...cookieHeader(first), 'X-CSRF-Token': first.csrf_token as string },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    const next = jar(refreshed);
    for (const pair of [first, next])
      expect((await call('GET', '/auth/me', { headers: cookieHeader(pair) })).status).toBe(200);
    return { first, next };
  }

  it('with the newest cookie also ends the pair it replaced, though that one is still in its grace', async () => {
    const { first, next } = await refreshedSession();
    const out = await call('POST', '/auth/logout', {
      headers: { ...cookieHeader(next), 'X-CSRF-Token': next.csrf_token as string },
    });
    expect(out.status).toBe(204);
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(next) }), 401);
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(first) }), 401);
  });

  it('with the previous cookie (in its grace) also ends the pair that replaced it', async () => {
    const { first, next } = await refreshedSession();
    const out = await call('POST', '/auth/logout', {
      headers: { ...cookieHeader(first), 'X-CSRF-Token': first.csrf_token as string },
    });
    expect(out.status).toBe(204);
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(first) }), 401);
    expectError(await call('GET', '/auth/me', { headers: cookieHeader(next) }), 401);
  });
});

describe('getConsoleConfig', () => {
  it('is public and matches AuthConsoleConfig without secrets', async () => {
    const res = await call('GET', '/console/config');
    expect(res.status).toBe(200);
    expect(AuthConsoleConfig.safeParse(res.body.auth).success).toBe(true);
    expect(res.body.auth).toMatchObject({ enabled: true, token_login: true, password_login: false });
    expect(res.text).not.toMatch(/"d"|private|secret/i);
  });
});

describe('with token login switched off and a low failure limit', () => {
  it('refuses login with 403 (disabled login)', async () => {
    const host = inject('host');
    const other = await startHostProcess({
      ...onSharedTable(host),
      CONSOLE_TOKEN_LOGIN: 'false',
    });
    try {
      const res = await call('POST', '/auth/login', {
        baseUrl: other.url,
        dataDir: other.dataDir,
        body: { token: host.apiKey },
      });
      expectError(res, 403, 'login_disabled');
      const cfg = await call('GET', '/console/config', { baseUrl: other.url, dataDir: other.dataDir });
      expect(cfg.body.auth.token_login).toBe(false);
    } finally {
      await other.stop();
      other.cleanup();
    }
  }, 120_000);

  it('limits failed logins per client address (429 with Retry-After), while other requests still work', async () => {
    const host = inject('host');
    const other = await startHostProcess({
      ...onSharedTable(host),
      LOGIN_FAILURE_LIMIT: '3',
    });
    try {
      const opts = { baseUrl: other.url, dataDir: other.dataDir };
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        statuses.push(
          (await call('POST', '/auth/login', { ...opts, body: { token: `gpk_${'x'.repeat(43)}` } })).status,
        );
      }
      // The shared table may already hold failures of 127.0.0.1 from other tests in this window.
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
      const limited = await call('POST', '/auth/login', { ...opts, body: { token: host.apiKey } });
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await call('GET', '/auth/me', { ...opts, headers: asSuperAdmin() })).status).toBe(200);
    } finally {
      await other.stop();
      other.cleanup();
    }
  }, 120_000);
});
