import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { ROLES_CLAIM } from '#auth/authenticate.ts';
import { localIssuer } from '#infra/local/files.ts';
import { type ApiResponse, asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';
import { type HostProcess, onSharedTable, startHostProcess } from '../support/host-process.ts';

const MiB = 1024 * 1024;

/** One request over plain HTTP to the host's HTTP port. */
function plainHttp(method: string, path: string, body?: string): Promise<ApiResponse> {
  const url = new URL(inject('host').httpUrl + path);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: body ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers, text, body: parsed, cookies: [] });
        });
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

/** Asserts the security headers every response of the API carries. */
function expectSecurityHeaders(res: ApiResponse) {
  expect(res.headers['strict-transport-security'], `HSTS on ${res.status}`).toMatch(/max-age=\d{7,}/);
  expect(res.headers['x-content-type-options'], `nosniff on ${res.status}`).toBe('nosniff');
  expect(res.headers['x-frame-options'], `X-Frame-Options on ${res.status}`).toBe('DENY');
  expect(res.headers['referrer-policy'], `Referrer-Policy on ${res.status}`).toBe('no-referrer');
  expect(res.headers['content-security-policy'], `CSP on ${res.status}`).toContain("default-src 'none'");
}

/** A JSON body of exactly `size` bytes that creates workspace `name` if it were accepted. */
function bodyOfSize(name: string, size: number): string {
  const head = `{"name":"${name}","description":"`;
  const tail = '"}';
  return head + 'x'.repeat(size - head.length - tail.length) + tail;
}

describe('426 for plain HTTP', () => {
  it.each([
    ['GET', '/workspaces'],
    ['GET', '/openapi.json'],
    ['POST', '/workspaces'],
    ['PUT', '/workspaces/demo'],
    ['DELETE', '/workspaces/demo/apikeys/6f0c2a4e-3b7d-4e51-9a8c-1d2e3f405060'],
    ['GET', '/no/such/route'],
    ['PATCH', '/workspaces'],
  ])('answers %s %s on the HTTP port with 426 and Upgrade', async (method, path) => {
    const res = await plainHttp(method, path, method === 'POST' ? '{"name":"x"}' : undefined);
    expectError(res, 426, 'https_required');
    expect(res.headers.upgrade).toBe('TLS/1.2, HTTP/1.1');
    expectSecurityHeaders(res);
  });

  it('answers 426 on the HTTP port even outside the base path and with a valid credential', async () => {
    const res = await plainHttp('GET', '/../../');
    expectError(res, 426, 'https_required');
    const withCredential = await new Promise<number>((resolve, reject) => {
      const req = request(new URL(`${inject('host').httpUrl}/auth/me`), { headers: asSuperAdmin() }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(withCredential).toBe(426);
  });

  it.each([
    ['GET', '/workspaces', undefined],
    ['GET', '/auth/me', undefined],
    ['POST', '/workspaces', { name: 'never-created' }],
  ])('answers %s %s with X-Forwarded-Proto: http on the HTTPS port with 426', async (method, path, body) => {
    const name = uniqueName('proto');
    const res = await call(method, path, {
      headers: { ...asSuperAdmin(), 'X-Forwarded-Proto': 'http' },
      body: body ? { name } : undefined,
    });
    expectError(res, 426, 'https_required');
    expect(res.headers.upgrade).toBe('TLS/1.2, HTTP/1.1');
    expectSecurityHeaders(res);
    if (body) expectError(await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() }), 404);
  });

  it('answers the public OpenAPI route with 426 too when forwarded from plain HTTP', async () => {
    const res = await call('GET', '/openapi.json', { headers: { 'X-Forwarded-Proto': 'HTTP' } });
    expectError(res, 426, 'https_required');
  });

  it('serves a request forwarded over HTTPS normally', async () => {
    const res = await call('GET', '/auth/me', {
      headers: { ...asSuperAdmin(), 'X-Forwarded-Proto': 'https' },
    });
    expect(res.status).toBe(200);
  });
});

describe('routing and security headers', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/workspaces/demo/nope'],
    ['GET', '/workspaces/demo/apikeys/x/y'],
    ['PATCH', '/workspaces/demo'],
    ['POST', '/openapi.json'],
    ['DELETE', '/workspaces'],
    ['PUT', '/auth/me'],
    ['POST', '/workspaces/demo'],
  ])('answers %s %s with 404 route_not_found, with or without a credential', async (method, path) => {
    const anonymous = await call(method, path);
    const authenticated = await call(method, path, { headers: asSuperAdmin() });
    expectError(anonymous, 404, 'route_not_found');
    expectError(authenticated, 404, 'route_not_found');
    expectSecurityHeaders(anonymous);
  });

  it('answers paths outside /api/v1 and the console with 404 route_not_found; / sends a browser to the console', async () => {
    const root = inject('host').url.replace(/\/api\/v1$/, '');
    for (const path of ['/api/v2/workspaces', '/workspaces', '/api', '/consoles']) {
      expectError(
        await call('GET', path, { baseUrl: root, headers: asSuperAdmin() }),
        404,
        'route_not_found',
      );
    }
    // The site root is the console's front door (ADR 0098), not an API resource.
    const front = await call('GET', '/', { baseUrl: root, headers: asSuperAdmin() });
    expect(front.status).toBe(302);
    expect(front.headers.location).toBe('/console/');
    expect(front.text).toBe('');
  });

  it('puts the security headers on success and on every kind of error', async () => {
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    const responses = [
      await call('GET', '/workspaces', { headers: asSuperAdmin() }),
      await call('GET', '/openapi.json'),
      await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name: uniqueName() } }),
      await call('POST', '/workspaces', { headers: asSuperAdmin(), body: '{' }),
      await call('GET', '/workspaces'),
      await call('PUT', `/workspaces/${ws.id}`, { headers: withKey(viewer.key), body: {} }),
      await call('GET', `/workspaces/${uniqueName('missing')}`, { headers: asSuperAdmin() }),
      await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name: ws.name } }),
      await call('PUT', `/workspaces/${ws.id}`, {
        headers: { ...asSuperAdmin(), 'If-Match': '"99"' },
        body: {},
      }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 201, 400, 401, 403, 404, 409, 412]);
    for (const res of responses) expectSecurityHeaders(res);
  });
});

describe('getOpenAPI', () => {
  it('serves the OpenAPI 3.1 document without a credential, with one operation per route', async () => {
    // Act
    const res = await call('GET', '/openapi.json');
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.openapi).toMatch(/^3\.1\.\d+$/);
    expect(res.body.info.version).toBe('0.1.2');
    const documented: string[] = [];
    for (const [path, methods] of Object.entries(res.body.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods))
        documented.push(`${method.toUpperCase()} ${path} ${op.operationId}`);
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
    expect(res.body.paths['/api/v1/openapi.json'].get.security).toEqual([]);
  });

  it('ignores even an invalid credential on the public route', async () => {
    const res = await call('GET', '/openapi.json', { headers: withKey('not-a-key') });
    expect(res.status).toBe(200);
    expect(res.body.info.version).toBe('0.1.2');
  });
});

describe('413 for a body over MAX_BODY_BYTES', () => {
  it('refuses 1 MiB + 1 bytes with 413 and writes nothing', async () => {
    // Prepare
    const name = uniqueName('huge');
    const body = bodyOfSize(name, MiB + 1);
    expect(Buffer.byteLength(body)).toBe(MiB + 1);
    // Act
    const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body });
    // Assess
    expectError(res, 413, 'body_too_large');
    expectSecurityHeaders(res);
    expectError(
      await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() }),
      404,
      'workspace_not_found',
    );
  });

  it('counts bytes, not characters', async () => {
    const name = uniqueName('utf8');
    const head = `{"name":"${name}","description":"`;
    // 'é' is two bytes in UTF-8: the character count stays under the limit, the byte count does not.
    const filler = 'é'.repeat(Math.ceil((MiB - head.length) / 2) + 1);
    const body = `${head}${filler}"}`;
    expect(body.length).toBeLessThan(MiB);
    expect(Buffer.byteLength(body)).toBeGreaterThan(MiB);
    expectError(await call('POST', '/workspaces', { headers: asSuperAdmin(), body }), 413, 'body_too_large');
    expectError(await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() }), 404);
  });

  it('accepts a body of exactly the limit into parsing (validation then refuses the long description)', async () => {
    const name = uniqueName('edge');
    const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: bodyOfSize(name, MiB) });
    expectError(res, 400, 'validation_failed');
    expect(res.body.issues[0].path).toBe('body.description');
  });

  it('refuses a body over the Lambda ceiling (6 MiB + 1) with the standard 413', async () => {
    const name = uniqueName('giant');
    const res = await call('POST', '/workspaces', {
      headers: asSuperAdmin(),
      body: bodyOfSize(name, 6 * MiB + 1),
    });
    expectError(res, 413, 'body_too_large');
    expectSecurityHeaders(res);
    expectError(await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() }), 404);
  });
});

describe('a host with a low rate limit and a small body limit', () => {
  let host: HostProcess;
  const on = (
    method: string,
    path: string,
    opts: { headers?: Record<string, string>; body?: unknown } = {},
  ) => call(method, path, { ...opts, baseUrl: host.url, dataDir: host.dataDir });

  beforeAll(async () => {
    const shared = inject('host');
    host = await startHostProcess({
      ...onSharedTable(shared),
      GEOPLANE_RATE_LIMIT_RPS: '1',
      GEOPLANE_RATE_LIMIT_BURST: '3',
      MAX_BODY_BYTES: '4096',
    });
    // Load the authorizer and handlers once, on a usage key no test uses, so timing is steady.
    await on('GET', '/auth/me', { headers: withKey(host.apiKey as string) });
  });
  afterAll(async () => {
    await host?.stop();
    host?.cleanup();
  });

  it("answers 429 with Retry-After once a workspace's burst is spent, per workspace, and serves again later", async () => {
    // Prepare
    const throttledWs = (await createWorkspace()).id;
    const bystanderWs = (await createWorkspace()).id;
    const throttled = await createKey(throttledWs, 'viewer');
    const bystander = await createKey(bystanderWs, 'viewer');
    // Act
    const burst = await Promise.all(
      Array.from({ length: 6 }, () =>
        on('GET', `/workspaces/${throttledWs}`, { headers: withKey(throttled.key) }),
      ),
    );
    const other = await on('GET', `/workspaces/${bystanderWs}`, { headers: withKey(bystander.key) });
    // Assess
    const ok = burst.filter((r) => r.status === 200);
    const limited = burst.filter((r) => r.status === 429);
    expect(ok.length + limited.length).toBe(6);
    expect(ok.length).toBeGreaterThanOrEqual(3);
    expect(ok.length).toBeLessThanOrEqual(4);
    for (const res of limited) {
      expectError(res, 429, 'rate_limited');
      expectSecurityHeaders(res);
      expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
    expect(other.status).toBe(200);
    const retryAfter = Number(limited[0]?.headers['retry-after']);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 200));
    expect((await on('GET', `/workspaces/${throttledWs}`, { headers: withKey(throttled.key) })).status).toBe(
      200,
    );
  });

  it('applies MAX_BODY_BYTES from the environment: 413 over it, parsing at it', async () => {
    // Prepare
    const over = uniqueName('over');
    const at = uniqueName('at');
    // Act
    const tooLarge = await on('POST', '/workspaces', {
      headers: withKey(host.apiKey as string),
      body: bodyOfSize(over, 4097),
    });
    const atLimitBody = `{"name":"${at}"${' '.repeat(4096 - `{"name":"${at}"}`.length)}}`;
    expect(Buffer.byteLength(atLimitBody)).toBe(4096);
    const atLimit = await on('POST', '/workspaces', {
      headers: withKey(host.apiKey as string),
      body: atLimitBody,
    });
    // Assess
    expectError(tooLarge, 413, 'body_too_large');
    expect(atLimit.status, atLimit.text).toBe(201);
    expectError(await call('GET', `/workspaces/${over}`, { headers: asSuperAdmin() }), 404);
    expect((await call('GET', `/workspaces/${at}`, { headers: asSuperAdmin() })).status).toBe(200);
  });
});

describe('a host whose usage plan refills once in 100 s (ADR 0111)', () => {
  let host: HostProcess;
  const on = (method: string, path: string, headers: Record<string, string>) =>
    call(method, path, { headers, baseUrl: host.url, dataDir: host.dataDir });

  beforeAll(async () => {
    const shared = inject('host');
    // No refill within a test: every bucket holds exactly its burst of 3.
    host = await startHostProcess({
      ...onSharedTable(shared),
      GEOPLANE_RATE_LIMIT_RPS: '0.01',
      GEOPLANE_RATE_LIMIT_BURST: '3',
    });
  });
  afterAll(async () => {
    await host?.stop();
    host?.cleanup();
  });

  it("meters token and session callers on the path's workspace, so two workspaces never share a bucket, and global calls on the global key", async () => {
    // Prepare: one person, a viewer of two workspaces, with a token of this host's issuer and a session.
    const a = (await createWorkspace()).id;
    const b = (await createWorkspace()).id;
    const roles = { [a]: 'viewer', [b]: 'viewer' };
    const jwt = await (await localIssuer(host.dataDir)).sign({ [ROLES_CLAIM]: roles }, 'metered-user', 600);
    const login = await call('POST', '/auth/login', { body: { token: await token({ workspaces: roles }) } });
    expect(login.status, login.text).toBe(201);
    const session = { Cookie: login.cookies.map((c) => c.split(';')[0]).join('; ') };
    // Act: the token spends A's burst; then the session calls A, and the token and the session B.
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => on('GET', `/workspaces/${a}`, bearer(jwt))),
    );
    const sessionOnA = await on('GET', `/workspaces/${a}`, session);
    const tokenOnB = await on('GET', `/workspaces/${b}`, bearer(jwt));
    const sessionOnB = await on('GET', `/workspaces/${b}`, session);
    const global = await on('GET', '/auth/me', bearer(jwt));
    // Assess: A's bucket is one for every credential; B's is untouched by A's traffic; global calls apart.
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
    expectError(sessionOnA, 429, 'rate_limited');
    expect(tokenOnB.status, tokenOnB.text).toBe(200);
    expect(sessionOnB.status, sessionOnB.text).toBe(200);
    expect(global.status, global.text).toBe(200);
  });
});
