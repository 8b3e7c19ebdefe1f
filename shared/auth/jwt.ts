import { createLocalJWKSet, createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { config } from '../config/env.ts';

/** Asymmetric algorithms only: `none` and HMAC (e.g. HS256 signed with a public key) are refused. */
export const acceptedAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

type KeySet = ReturnType<typeof createLocalJWKSet> | ReturnType<typeof createRemoteJWKSet>;
let keySet: KeySet | undefined;

function jwks(): KeySet | undefined {
  if (keySet) return keySet;
  const cfg = config();
  if (cfg.OIDC_JWKS) {
    keySet = createLocalJWKSet(JSON.parse(cfg.OIDC_JWKS));
  } else if (cfg.OIDC_ISSUER) {
    const uri = cfg.OIDC_JWKS_URI ?? `${cfg.OIDC_ISSUER.replace(/\/$/, '')}/.well-known/jwks.json`;
    // An unknown `kid` refetches the JWKS at most once per cooldown.
    keySet = createRemoteJWKSet(new URL(uri), {
      cooldownDuration: cfg.OIDC_JWKS_COOLDOWN_MS,
      timeoutDuration: 3_000,
    });
  }
  return keySet;
}

/** Verifies a bearer token against the configured issuer; returns its claims or undefined when rejected. */
export async function verifyBearer(token: string): Promise<JWTPayload | undefined> {
  const cfg = config();
  const keys = jwks();
  if (!keys || !cfg.OIDC_ISSUER) return undefined;
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: cfg.OIDC_ISSUER,
      ...(cfg.OIDC_AUDIENCE ? { audience: cfg.OIDC_AUDIENCE } : {}),
      algorithms: acceptedAlgorithms,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: 5,
    });
    return payload;
  } catch {
    return undefined;
  }
}
