import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// A real JWKS endpoint on 127.0.0.1 that counts its fetches.
let server: Server;
let fetches = 0;
const published: JWK[] = [];
let verifyBearer: (token: string) => Promise<unknown>;
const issuer = 'https://idp.test.invalid/realm';
const audience = 'geoplane-api';

async function key(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

function sign(k: Awaited<ReturnType<typeof key>>) {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: k.kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject('u1')
    .setExpirationTime('5m')
    .sign(k.privateKey);
}

beforeAll(async () => {
  server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  Object.assign(process.env, {
    OIDC_ISSUER: issuer,
    OIDC_AUDIENCE: audience,
    OIDC_JWKS_URI: `http://127.0.0.1:${port}/jwks`,
    OIDC_JWKS_COOLDOWN_MS: '1500',
  });
  delete process.env.OIDC_JWKS;
  ({ verifyBearer } = await import('#auth/jwt.ts'));
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('remote JWKS', () => {
  it('fetches once, refetches for an unknown kid at most once per cooldown, then finds a rotated key', async () => {
    const a = await key('a');
    const b = await key('b');
    published.push(a.jwk);

    expect(await verifyBearer(await sign(a))).toMatchObject({ sub: 'u1' });
    expect(fetches).toBe(1);
    expect(await verifyBearer(await sign(a))).toBeDefined();
    expect(fetches).toBe(1);

    // Unknown kid: one refetch, and no more inside the cooldown.
    expect(await verifyBearer(await sign(b))).toBeUndefined();
    const afterUnknown = fetches;
    expect(afterUnknown).toBeLessThanOrEqual(2);
    expect(await verifyBearer(await sign(b))).toBeUndefined();
    expect(await verifyBearer(await sign(b))).toBeUndefined();
    expect(fetches).toBe(afterUnknown);

    // The IdP rotates in key b: after the cooldown the next unknown kid refetches and succeeds.
    published.push(b.jwk);
    await new Promise((r) => setTimeout(r, 1600));
    expect(await verifyBearer(await sign(b))).toMatchObject({ sub: 'u1' });
    expect(fetches).toBe(afterUnknown + 1);
  });

  it('serves a verified token from memory until its expiry or a minute, never a token it has not verified', async () => {
    const c = await key('c');
    published.push(c.jwk);
    // A new kid is fetched once the previous test's cooldown is over.
    await new Promise((r) => setTimeout(r, 1600));
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const token = await sign(c);
      const first = await verifyBearer(token);
      expect(first).toMatchObject({ sub: 'u1' });
      // The same token again: the claims verified before, the very same object.
      expect(await verifyBearer(token)).toBe(first);
      // A token differing only in its signature is verified, and refused.
      const [head, body, signature] = token.split('.') as [string, string, string];
      const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
      expect(await verifyBearer(`${head}.${body}.${flipped}`)).toBeUndefined();
      expect(await verifyBearer(`${head}.${body}.${signature}`)).toBe(first);
      // After a minute it is verified again (still valid: a new object with the same claims).
      vi.setSystemTime(Date.now() + 61_000);
      const again = await verifyBearer(token);
      expect(again).toEqual(first);
      expect(again).not.toBe(first);
      // Past its exp (5 minutes, plus the 5 s tolerance) it is refused, though it was served a moment ago.
      expect(await verifyBearer(token)).toBe(again);
      vi.setSystemTime(Date.now() + 5 * 60_000);
      expect(await verifyBearer(token)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});
