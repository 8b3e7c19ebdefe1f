import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBAL_ROLE_CLAIM, ROLES_CLAIM } from '#auth/authenticate.ts';
import { localIssuer, localIssuerUrl } from '#infra/local/files.ts';
import { type ApiResponse, call } from '../support/client.ts';
import { expectError } from '../support/fixtures.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';
import { freePort } from '../support/ports.ts';

/** A response must say "unavailable" without leaking how the store is reached. */
function expectUnavailable(res: ApiResponse, reason?: 'auth_unavailable' | 'store_unavailable') {
  expectError(res, 503, reason);
  expect(['auth_unavailable', 'store_unavailable']).toContain(res.body.reason);
  // DESIGN §5 asks Retry-After only of 429; the handlers add it to their 503 as well.
  if (res.body.reason === 'store_unavailable') expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(res.headers['strict-transport-security']).toBeDefined();
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|dynamo|stack|at \w+ \(/i);
}

describe('a host whose DynamoDB is unreachable', () => {
  let host: HostProcess;
  let closedPort: number;
  const on = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    call(method, path, { headers, body, baseUrl: host.url, dataDir: host.dataDir });
  const jwt = async (claims: Record<string, unknown>, subject = 'outage-user') => ({
    Authorization: `Bearer ${await (await localIssuer(host.dataDir)).sign(claims, subject, 600)}`,
  });

  beforeAll(async () => {
    // Nothing listens on a port that was just free: every connection is refused.
    closedPort = await freePort();
    host = await startHostProcess({
      GEOPLANE_DYNAMODB_ENDPOINT: `http://127.0.0.1:${closedPort}`,
      GEOPLANE_SKIP_BOOTSTRAP: '1',
    });
  });
  afterAll(async () => {
    await host?.stop();
    host?.cleanup();
  });

  it('still refuses a JWT signed by another key with 401: the signature is checked before the store', async () => {
    // The same issuer URL, another key: only the signature can tell them apart.
    const keys = mkdtempSync(join(tmpdir(), 'geoplane-stranger-'));
    let forged: string;
    try {
      const stranger = await localIssuer(keys, localIssuerUrl(host.dataDir));
      forged = await stranger.sign({ [GLOBAL_ROLE_CLAIM]: 'super_admin' }, 'mallory', 600);
    } finally {
      rmSync(keys, { recursive: true, force: true });
    }
    expectError(
      await on('GET', '/workspaces/x', { Authorization: `Bearer ${forged}` }),
      401,
      'unauthenticated',
    );
  });

  it.each([
    [
      'GET /workspaces/x as super_admin',
      'GET',
      '/workspaces/x',
      { [GLOBAL_ROLE_CLAIM]: 'super_admin' },
      undefined,
    ],
    [
      'GET /workspaces/x as a viewer of x',
      'GET',
      '/workspaces/x',
      { [ROLES_CLAIM]: { x: 'viewer' } },
      undefined,
    ],
    ['GET /workspaces/x without a role', 'GET', '/workspaces/x', {}, undefined],
    ['GET /workspaces', 'GET', '/workspaces', { [GLOBAL_ROLE_CLAIM]: 'super_admin' }, undefined],
    [
      'POST /workspaces',
      'POST',
      '/workspaces',
      { [GLOBAL_ROLE_CLAIM]: 'super_admin' },
      { name: 'during-outage' },
    ],
    [
      'POST /workspaces/x/apikeys',
      'POST',
      '/workspaces/x/apikeys',
      { [ROLES_CLAIM]: { x: 'admin' } },
      { name: 'k', role_id: 'viewer' },
    ],
    ['GET /auth/me with workspace roles', 'GET', '/auth/me', { [ROLES_CLAIM]: { x: 'admin' } }, undefined],
  ])('answers %s with a valid JWT with 503, never 500', async (_case, method, path, claims, body) => {
    // Act
    const res = await on(method, path, await jwt(claims), body);
    // Assess: the authorizer (claim mappings) or the handler (the workspace) notices the outage first.
    expectUnavailable(res);
  });

  it('answers a well-formed API key with 503: the authorizer cannot check it', async () => {
    const res = await on('GET', '/workspaces/x', { 'X-API-Key': `gpk_${'A'.repeat(43)}` });
    expectUnavailable(res, 'auth_unavailable');
  });

  it('answers an API key with 503 on every kind of route', async () => {
    for (const [method, path] of [
      ['GET', '/auth/me'],
      ['GET', '/workspaces'],
      ['DELETE', '/workspaces/x/apikeys/6f0c2a4e-3b7d-4e51-9a8c-1d2e3f405060'],
    ] as const) {
      expectUnavailable(await on(method, path, { 'X-API-Key': `gpk_${'B'.repeat(43)}` }), 'auth_unavailable');
    }
  });

  it('still refuses a malformed API key with 401 (no store needed to reject it)', async () => {
    expectError(await on('GET', '/workspaces/x', { 'X-API-Key': 'not-a-key' }), 401, 'unauthenticated');
  });

  it('still refuses a request without a credential with 401', async () => {
    expectError(await on('GET', '/workspaces/x'), 401, 'unauthenticated');
  });

  it('still serves the public OpenAPI document', async () => {
    const res = await on('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.info.version).toBe('0.1.2');
  });

  it('answers 20 concurrent requests with 503 each, none with 500', async () => {
    const headers = await jwt({ [GLOBAL_ROLE_CLAIM]: 'super_admin' });
    const results = await Promise.all(Array.from({ length: 20 }, () => on('GET', '/workspaces/x', headers)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(503));
  });
});
