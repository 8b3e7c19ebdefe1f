import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { describe, expect, inject, it } from 'vitest';
import { consoleContentSecurityPolicy } from '#http/console-headers.ts';
import { localIssuerUrl } from '#infra/local/files.ts';
import { type ApiResponse, call } from '../support/client.ts';

const origin = () => inject('host').url.replace(/\/api\/v1$/, '');
const site = (
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
) => call(method, path, { baseUrl: origin(), ...options });
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
});

describe('the console on the local host', () => {
  it('serves index.html for every console path with the strict CSP, and hashed assets as immutable', async () => {
    for (const path of ['/console/', '/console/workspaces/demo/services', '/console/callback?code=x']) {
      const res = await site('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toMatch(/<div id="app">/);
      expect(res.headers['content-security-policy']).toBe(consoleContentSecurityPolicy([origin()]));
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=/);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
    const index = await site('GET', '/console/');
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    expect(script).toBeDefined();
    const asset = await site('GET', script as string);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/text\/javascript/);
    expect(asset.headers['cache-control']).toMatch(/immutable/);
    // No inline script anywhere in the page: everything runs from files under 'self'.
    expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('redirects / to the console and refuses what is not a GET or a known file', async () => {
    const root = await site('GET', '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    expect((await site('POST', '/console/', { body: 'x' })).status).toBe(405);
    expect((await site('GET', '/console/assets/nothing-here.js')).status).toBe(404);
    // Malformed percent-encoding is the gateway's 4xx, not a crash of the host.
    const malformed = await site('GET', '/console/%E0%A4%A');
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    expect(malformed.status).toBeLessThan(500);
    expect((await site('GET', '/console/')).status).toBe(200);
    // Traversal never leaves console/dist: encoded dot segments are a missing asset or the page.
    for (const path of [
      '/console/assets/..%2f..%2fbuild.ts',
      '/console/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
    ]) {
      const res = await site('GET', path);
      expect(res.text, path).not.toMatch(/ensureConsoleBuilt|"devDependencies"/);
    }
  });
});

function pkce() {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('the local OIDC issuer (authorization code + PKCE)', () => {
  const issuer = () => localIssuerUrl(inject('host').dataDir);
  const path = (suffix: string) => `${new URL(issuer()).pathname}${suffix}`;
  const redirectUri = () => `${origin()}/console/callback`;
  const authorize = (overrides: Record<string, string> = {}, challenge = pkce().challenge) => ({
    response_type: 'code',
    client_id: 'geoplane-local',
    redirect_uri: redirectUri(),
    scope: 'openid profile',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  });
  const codeFrom = (res: ApiResponse) =>
    new URL(res.headers.location as string).searchParams.get('code') as string;

  it('publishes a discovery document whose endpoints are on this host', async () => {
    const res = await site('GET', path('/.well-known/openid-configuration'));
    expect(res.status).toBe(200);
    expect(res.body.issuer).toBe(issuer());
    expect(res.body.code_challenge_methods_supported).toEqual(['S256']);
    expect(res.body.token_endpoint).toBe(`${issuer()}/token`);
    const jwks = await site('GET', new URL(res.body.jwks_uri).pathname);
    expect(jwks.body.keys[0].kty).toBe('EC');
    expect(jwks.text).not.toMatch(/"d"/);
  });

  it('issues a code for the console and redeems it once, with the verifier, for an id token the API accepts', async () => {
    const { verifier, challenge } = pkce();
    const page = await site('GET', `${path('/authorize')}?${new URLSearchParams(authorize({}, challenge))}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    const granted = await site(
      'POST',
      path('/authorize'),
      form({
        ...authorize({}, challenge),
        subject: 'oidc-e2e',
        super_admin: 'yes',
        workspace_roles: 'demo=viewer',
      }),
    );
    expect(granted.status).toBe(303);
    const back = new URL(granted.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri());
    expect(back.searchParams.get('state')).toBe('st-1');
    const code = codeFrom(granted);
    const redeem = (fields: Record<string, string>) =>
      site(
        'POST',
        path('/token'),
        form({
          grant_type: 'authorization_code',
          code,
          client_id: 'geoplane-local',
          redirect_uri: redirectUri(),
          code_verifier: verifier,
          ...fields,
        }),
      );
    // A wrong verifier burns the code: the right one afterwards is refused too.
    const wrong = await redeem({ code_verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect((await redeem({})).body.error).toBe('invalid_grant');

    // A fresh code with the right verifier: one id token, then never again.
    const again = await site(
      'POST',
      path('/authorize'),
      form({ ...authorize({}, challenge), subject: 'oidc-e2e', super_admin: 'yes' }),
    );
    const fresh = codeFrom(again);
    const ok = await site(
      'POST',
      path('/token'),
      form({
        grant_type: 'authorization_code',
        code: fresh,
        client_id: 'geoplane-local',
        redirect_uri: redirectUri(),
        code_verifier: verifier,
      }),
    );
    expect(ok.status, ok.text).toBe(200);
    const claims = decodeJwt(ok.body.id_token);
    expect(claims).toMatchObject({ iss: issuer(), aud: 'geoplane-local', sub: 'oidc-e2e', nonce: 'n-1' });
    const login = await call('POST', '/auth/login', { body: { token: ok.body.id_token } });
    expect(login.status, login.text).toBe(201);
    expect(login.body.super_admin).toBe(true);
    const replay = await site(
      'POST',
      path('/token'),
      form({
        grant_type: 'authorization_code',
        code: fresh,
        client_id: 'geoplane-local',
        redirect_uri: redirectUri(),
        code_verifier: verifier,
      }),
    );
    expect(replay.body.error).toBe('invalid_grant');
  });

  it.each([
    ['an unknown client', { client_id: 'someone-else' }],
    ['an unregistered redirect URI', { redirect_uri: 'https://evil.example/callback' }],
    ['no PKCE', { code_challenge_method: 'plain' }],
    ['a malformed challenge', { code_challenge: 'short' }],
    ['another response type', { response_type: 'token' }],
    ['no openid scope', { scope: 'profile' }],
  ])('refuses %s without redirecting anywhere', async (_what, overrides) => {
    const res = await site('GET', `${path('/authorize')}?${new URLSearchParams(authorize(overrides))}`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    const posted = await site('POST', path('/authorize'), form({ ...authorize(overrides), subject: 'x' }));
    expect(posted.status).toBe(400);
    expect(posted.headers.location).toBeUndefined();
  });

  it('refuses a code redeemed for another redirect URI or client, and bad role input on its page', async () => {
    const { verifier, challenge } = pkce();
    const code = codeFrom(
      await site('POST', path('/authorize'), form({ ...authorize({}, challenge), subject: 's' })),
    );
    const res = await site(
      'POST',
      path('/token'),
      form({
        grant_type: 'authorization_code',
        code,
        client_id: 'geoplane-local',
        redirect_uri: `${origin()}/elsewhere`,
        code_verifier: verifier,
      }),
    );
    expect(res.body.error).toBe('invalid_grant');
    const badRoles = await site(
      'POST',
      path('/authorize'),
      form({ ...authorize({}, challenge), subject: 's', workspace_roles: 'demo=owner' }),
    );
    expect(badRoles.status).toBe(400);
    expect(badRoles.text).toMatch(/demo=owner/);
    const grantType = await site('POST', path('/token'), form({ grant_type: 'password' }));
    expect(grantType.body.error).toBe('unsupported_grant_type');
  });
});
