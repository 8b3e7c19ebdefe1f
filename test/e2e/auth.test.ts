import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, importJWK, type JWK, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { AuthMe } from '#api/schemas.ts';
import { GLOBAL_ROLE_CLAIM } from '#auth/authenticate.ts';
import { LOCAL_AUDIENCE, localIssuerUrl } from '#infra/local/files.ts';
import { type ApiResponse, asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';

type Role = 'admin' | 'editor' | 'viewer';
const MISSING_ID = '6f0c2a4e-3b7d-4e51-9a8c-1d2e3f405060';

/** The local issuer's private key, read from the host's data dir, to forge tokens that differ in one way. */
function issuerKey(): { jwk: JWK; kid: string } {
  const jwk = JSON.parse(readFileSync(join(inject('host').dataDir, 'issuer-key.json'), 'utf8')) as JWK;
  return { jwk, kid: jwk.kid as string };
}

interface Forge {
  claims?: JWTPayload;
  header?: Record<string, unknown>;
  key?: Parameters<SignJWT['sign']>[0];
  alg?: string;
}

/** Signs a token like the local issuer does, with one aspect overridden. */
async function forge({ claims = {}, header = {}, key, alg = 'ES256' }: Forge = {}): Promise<string> {
  const { jwk, kid } = issuerKey();
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    iss: localIssuerUrl(inject('host').dataDir),
    aud: LOCAL_AUDIENCE,
    sub: 'forged-user',
    iat: now,
    exp: now + 600,
    [GLOBAL_ROLE_CLAIM]: 'super_admin',
    ...claims,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  return new SignJWT(payload)
    .setProtectedHeader({ alg, kid, typ: 'JWT', ...header } as { alg: string })
    .sign(key ?? (await importJWK(jwk, 'ES256')));
}

function otherEs256Key() {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The parts of an error body that must not vary with the cause. */
const stable = (res: ApiResponse) => {
  const { request_id: _id, ...rest } = res.body as Record<string, unknown>;
  return rest;
};

describe('authorization matrix of workspace routes', () => {
  let ws: { id: string; name: string };
  const keys = {} as Record<Role, string>;
  beforeAll(async () => {
    ws = await createWorkspace();
    for (const role of ['admin', 'editor', 'viewer'] as const)
      keys[role] = (await createKey(ws.id, role)).key;
  });

  const credentials: [string, (role: Role) => Promise<Record<string, string>>][] = [
    ['an API key', async (role) => withKey(keys[role])],
    [
      'a JWT naming the workspace by id',
      async (role) => bearer(await token({ workspaces: { [ws.id]: role } })),
    ],
    [
      'a JWT naming the workspace by name',
      async (role) => bearer(await token({ workspaces: { [ws.name]: role } })),
    ],
  ];

  /** [operation, method, path, body, status for viewer, editor, admin] */
  const operations: [string, string, (w: string, keyId: string) => string, unknown, number[]][] = [
    ['getWorkspace', 'GET', (w) => `/workspaces/${w}`, undefined, [200, 200, 200]],
    ['updateWorkspace', 'PUT', (w) => `/workspaces/${w}`, { description: 'matrix' }, [403, 403, 200]],
    ['listAPIKeys', 'GET', (w) => `/workspaces/${w}/apikeys`, undefined, [403, 403, 200]],
    [
      'createAPIKey',
      'POST',
      (w) => `/workspaces/${w}/apikeys`,
      { name: 'matrix', role_id: 'viewer' },
      [403, 403, 201],
    ],
    ['getAPIKey', 'GET', (w, k) => `/workspaces/${w}/apikeys/${k}`, undefined, [403, 403, 200]],
    ['revokeAPIKey', 'DELETE', (w, k) => `/workspaces/${w}/apikeys/${k}`, undefined, [403, 403, 204]],
  ];

  const cases = credentials.flatMap(([credential, headersFor]) =>
    operations.flatMap(([op, method, path, body, statuses]) =>
      (['viewer', 'editor', 'admin'] as const).map(
        (role, i) =>
          [op, role, credential, statuses[i] as number, { method, path, body, headersFor }] as const,
      ),
    ),
  );

  it.each(cases)('%s as %s with %s answers %i', async (_op, role, _credential, status, c) => {
    // Prepare
    const target = await createKey(ws.id, 'viewer');
    const headers = await c.headersFor(role);
    // Act
    const res = await call(c.method, c.path(ws.id, target.id), { headers, body: c.body });
    // Assess
    if (status >= 400) {
      expectError(res, status, 'insufficient_role');
    } else {
      expect(res.status, res.text).toBe(status);
    }
    const stillValid = await call('GET', '/auth/me', { headers: withKey(target.key) });
    expect(stillValid.status).toBe(c.method === 'DELETE' && status === 204 ? 401 : 200);
  });

  it.each([
    ['getWorkspace', 'GET', (w: string) => `/workspaces/${w}`, undefined],
    ['updateWorkspace', 'PUT', (w: string) => `/workspaces/${w}`, { description: 'x' }],
    ['listAPIKeys', 'GET', (w: string) => `/workspaces/${w}/apikeys`, undefined],
    ['createAPIKey', 'POST', (w: string) => `/workspaces/${w}/apikeys`, { name: 'x', role_id: 'viewer' }],
    ['getAPIKey', 'GET', (w: string) => `/workspaces/${w}/apikeys/${MISSING_ID}`, undefined],
    ['revokeAPIKey', 'DELETE', (w: string) => `/workspaces/${w}/apikeys/${MISSING_ID}`, undefined],
  ])(
    '%s gives a caller without a role the same 403 for an existing and a missing workspace',
    async (_op, method, path, body) => {
      // Prepare
      const other = await createWorkspace();
      const outsiderKey = withKey((await createKey(other.id, 'admin')).key);
      const outsiderJwt = bearer(await token({ workspaces: { [other.id]: 'admin' } }));
      const nobodyJwt = bearer(await token({}));
      const missing = uniqueName('missing');
      for (const headers of [outsiderKey, outsiderJwt, nobodyJwt]) {
        // Act
        const existingById = await call(method, path(ws.id), { headers, body });
        const existingByName = await call(method, path(ws.name), { headers, body });
        const missingByName = await call(method, path(missing), { headers, body });
        const missingById = await call(method, path(MISSING_ID), { headers, body });
        // Assess
        for (const res of [existingById, existingByName, missingByName, missingById]) {
          expectError(res, 403, 'no_workspace_access');
          expect(stable(res)).toEqual(stable(existingById));
        }
      }
    },
  );

  it.each([
    ['the bootstrap key', async () => asSuperAdmin()],
    ['a super_admin JWT', async () => bearer(await token({ superAdmin: true }))],
  ])('gives super_admin 404 for a missing workspace (%s)', async (_c, headersFor) => {
    const headers = await headersFor();
    for (const w of [uniqueName('missing'), MISSING_ID]) {
      for (const [method, path, body] of [
        ['GET', `/workspaces/${w}`, undefined],
        ['PUT', `/workspaces/${w}`, { description: 'x' }],
        ['GET', `/workspaces/${w}/apikeys`, undefined],
        ['POST', `/workspaces/${w}/apikeys`, { name: 'x', role_id: 'viewer' }],
        ['DELETE', `/workspaces/${w}/apikeys/${MISSING_ID}`, undefined],
      ] as const) {
        expectError(await call(method, path, { headers, body }), 404, 'workspace_not_found');
      }
    }
  });

  it('lets a super_admin JWT manage keys of any workspace', async () => {
    const headers = bearer(await token({ superAdmin: true }, 'root-user'));
    const res = await call('POST', `/workspaces/${ws.name}/apikeys`, {
      headers,
      body: { name: 'by-jwt', role_id: 'viewer' },
    });
    expect(res.status, res.text).toBe(201);
    expect((await call('GET', `/workspaces/${ws.id}/apikeys/${res.body.id}`, { headers })).status).toBe(200);
  });

  it('grants nothing for a JWT role that names no role', async () => {
    const headers = bearer(await token({ workspaces: { [ws.id]: 'no-such-role' } }));
    expectError(await call('GET', `/workspaces/${ws.id}`, { headers }), 403);
    expectError(await call('GET', `/workspaces/${ws.id}/apikeys`, { headers }), 403);
  });

  it('refuses a workspace key the global routes with 403 super_admin_required', async () => {
    expectError(
      await call('GET', '/workspaces', { headers: withKey(keys.admin) }),
      403,
      'super_admin_required',
    );
    expectError(
      await call('DELETE', `/workspaces/${ws.id}`, { headers: withKey(keys.admin) }),
      403,
      'super_admin_required',
    );
  });
});

describe('getAuthMe', () => {
  it('describes the bootstrap key as super_admin with its api_key_id', async () => {
    const res = await call('GET', '/auth/me', { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(AuthMe.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body).toMatchObject({
      authenticated: true,
      auth_method: 'apikey',
      super_admin: true,
      session_id: null,
      workspaces: [],
    });
    expect(res.body.api_key_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.text).not.toContain(inject('host').apiKey.slice(4));
  });

  it('describes a workspace key with its workspace and role', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'editor', { owner_name: 'Ada' });
    const res = await call('GET', '/auth/me', { headers: withKey(key.key) });
    expect(res.status, res.text).toBe(200);
    expect(AuthMe.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body).toMatchObject({
      authenticated: true,
      principal: 'Ada',
      auth_method: 'apikey',
      super_admin: false,
      api_key_id: key.id,
      session_id: null,
      workspaces: [{ id: ws.id, name: ws.name, role: 'editor' }],
    });
  });

  it('describes a JWT by its subject, resolving workspaces named by id or name and dropping unknown ones', async () => {
    // Prepare
    const a = await createWorkspace();
    const b = await createWorkspace();
    const jwt = await token(
      { workspaces: { [a.id]: 'admin', [b.name]: 'viewer', [uniqueName('ghost')]: 'editor' } },
      'alice@example.com',
    );
    // Act
    const res = await call('GET', '/auth/me', { headers: bearer(jwt) });
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(AuthMe.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body).toMatchObject({
      authenticated: true,
      principal: 'alice@example.com',
      auth_method: 'jwt',
      super_admin: false,
      api_key_id: null,
      session_id: null,
    });
    expect(res.body.workspaces).toHaveLength(2);
    expect(res.body.workspaces).toEqual(
      expect.arrayContaining([
        { id: a.id, name: a.name, role: 'admin' },
        { id: b.id, name: b.name, role: 'viewer' },
      ]),
    );
  });

  it('describes a super_admin JWT', async () => {
    const res = await call('GET', '/auth/me', { headers: bearer(await token({ superAdmin: true }, 'root')) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      principal: 'root',
      auth_method: 'jwt',
      super_admin: true,
      workspaces: [],
    });
  });
});

describe('401 for a missing or rejected credential', () => {
  let baseline: ApiResponse;
  let revokedKey: string;
  beforeAll(async () => {
    baseline = await call('GET', '/auth/me');
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'admin');
    const revoke = await call('DELETE', `/workspaces/${ws.id}/apikeys/${key.id}`, {
      headers: asSuperAdmin(),
    });
    expect(revoke.status).toBe(204);
    revokedKey = key.key;
  });

  it('answers a request without a credential with 401 unauthenticated', () => {
    expectError(baseline, 401, 'unauthenticated');
  });

  it('accepts the forging helper’s own token (control for the JWT cases below)', async () => {
    const res = await call('GET', '/auth/me', { headers: bearer(await forge()) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ principal: 'forged-user', super_admin: true });
  });

  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['an empty X-API-Key', async () => ({ 'X-API-Key': '' })],
    ['a malformed X-API-Key', async () => withKey('not-a-key')],
    ['a key with the wrong prefix', async () => withKey(`gpx_${'A'.repeat(43)}`)],
    ['a key one character short', async () => withKey(inject('host').apiKey.slice(0, -1))],
    ['an unknown well-formed key', async () => withKey(`gpk_${'A'.repeat(43)}`)],
    ['a revoked key', async () => withKey(revokedKey)],
    ['the key prefix alone', async () => withKey(inject('host').apiKey.slice(0, 12))],
    [
      'Authorization: Basic',
      async () => ({ Authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` }),
    ],
    ['Authorization: Bearer without a token', async () => ({ Authorization: 'Bearer ' })],
    ['the API key as a bearer token', async () => bearer(inject('host').apiKey)],
    ['a garbage bearer token', async () => bearer('garbage')],
    ['a three-part garbage token', async () => bearer('abc.def.ghi')],
    [
      'a JWT with alg none',
      async () =>
        bearer(
          new UnsecuredJWT({ [GLOBAL_ROLE_CLAIM]: 'super_admin' })
            .setIssuer(localIssuerUrl(inject('host').dataDir))
            .setAudience(LOCAL_AUDIENCE)
            .setSubject('mallory')
            .setExpirationTime('10m')
            .encode(),
        ),
    ],
    [
      'a JWT with alg none and the issuer’s kid',
      async () => {
        const now = Math.floor(Date.now() / 1000);
        const header = b64({ alg: 'none', kid: issuerKey().kid, typ: 'JWT' });
        const payload = b64({
          iss: localIssuerUrl(inject('host').dataDir),
          aud: LOCAL_AUDIENCE,
          sub: 'm',
          exp: now + 600,
        });
        return bearer(`${header}.${payload}.`);
      },
    ],
    [
      'a JWT signed HS256 with a shared secret',
      async () => bearer(await forge({ alg: 'HS256', key: new TextEncoder().encode('s'.repeat(32)) })),
    ],
    [
      'a JWT signed HS256 with the issuer’s public key as secret',
      async () => {
        const { d: _d, ...pub } = issuerKey().jwk;
        return bearer(await forge({ alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(pub)) }));
      },
    ],
    [
      'a JWT from another issuer',
      async () => bearer(await forge({ claims: { iss: 'https://evil.example' } })),
    ],
    ['a JWT for another audience', async () => bearer(await forge({ claims: { aud: 'someone-else' } }))],
    [
      'an expired JWT',
      async () => {
        const now = Math.floor(Date.now() / 1000);
        return bearer(await forge({ claims: { iat: now - 3600, exp: now - 60 } }));
      },
    ],
    [
      'a JWT not valid before a future time',
      async () => bearer(await forge({ claims: { nbf: Math.floor(Date.now() / 1000) + 300 } })),
    ],
    ['a JWT without exp', async () => bearer(await forge({ claims: { exp: undefined } }))],
    ['a JWT without sub', async () => bearer(await forge({ claims: { sub: undefined } }))],
    [
      'a JWT with an unknown kid signed by another ES256 key',
      async () => bearer(await forge({ header: { kid: 'unknown-kid' }, key: otherEs256Key() })),
    ],
    [
      'a JWT with the issuer’s kid signed by another ES256 key',
      async () => bearer(await forge({ key: otherEs256Key() })),
    ],
    [
      'a JWT with a tampered signature',
      async () => {
        const [h, p, s] = (await forge()).split('.') as [string, string, string];
        const sig = Buffer.from(s, 'base64url');
        sig[10] = (sig[10] as number) ^ 0xff;
        return bearer(`${h}.${p}.${sig.toString('base64url')}`);
      },
    ],
    [
      'a JWT with a tampered payload',
      async () => {
        const [h, , s] = (await forge({ claims: { [GLOBAL_ROLE_CLAIM]: undefined } })).split('.');
        const now = Math.floor(Date.now() / 1000);
        const payload = b64({
          iss: localIssuerUrl(inject('host').dataDir),
          aud: LOCAL_AUDIENCE,
          sub: 'forged-user',
          exp: now + 600,
          [GLOBAL_ROLE_CLAIM]: 'super_admin',
        });
        return bearer(`${h}.${payload}.${s}`);
      },
    ],
    [
      'an invalid X-API-Key next to a valid bearer token',
      async () => ({ ...withKey('not-a-key'), ...bearer(await token({ superAdmin: true })) }),
    ],
    [
      'a revoked X-API-Key next to a valid bearer token',
      async () => ({ ...withKey(revokedKey), ...bearer(await token({ superAdmin: true })) }),
    ],
  ];

  it.each(cases)('answers %s with the same 401 body', async (_case, headersFor) => {
    const headers = await headersFor();
    for (const path of ['/auth/me', '/workspaces', `/workspaces/demo/apikeys`]) {
      const res = await call('GET', path, { headers });
      expectError(res, 401, 'unauthenticated');
      expect(stable(res)).toEqual(stable(baseline));
      expect(res.body.request_id).not.toBe(baseline.body.request_id);
    }
  });

  it('answers 401 before looking at the body or the workspace', async () => {
    const res = await call('POST', `/workspaces/${uniqueName('nope')}/apikeys`, { body: '{"broken' });
    expectError(res, 401, 'unauthenticated');
    expect(stable(res)).toEqual(stable(baseline));
  });

  it('keeps another JWT signed by a fresh key pair out even when its public key is well formed', async () => {
    // A key the host never saw, exported the way an attacker would publish it.
    const other = otherEs256Key();
    const jwk = await exportJWK(createPublicKey(other));
    expect(jwk.kty).toBe('EC');
    const res = await call('GET', '/auth/me', {
      headers: bearer(await forge({ header: { kid: 'attacker', jwk }, key: other })),
    });
    expectError(res, 401, 'unauthenticated');
  });
});
