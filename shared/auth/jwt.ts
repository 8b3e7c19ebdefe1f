import { createHash } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { config } from '#config/env.ts';

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

/** Seconds of clock skew allowed on `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 5;

/**
 * Tokens whose signature and claims were verified in this process (ADR 0104), by the SHA-256 of
 * the whole token: their claims, and until when they may be served without verifying again (the
 * earlier of `exp` with its tolerance and VERIFIED_TTL_MS after the verification, so a key the IdP
 * withdraws stops being honoured within that time). Only successes are kept; a bounded FIFO.
 */
const verified = new Map<string, { payload: JWTPayload; until: number }>();
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 1_000;

/** Verifies a bearer token against the configured issuer; returns its claims or undefined when rejected. */
export async function verifyBearer(token: string): Promise<JWTPayload | undefined> {
  const cfg = config();
  const keys = jwks();
  if (!keys || !cfg.OIDC_ISSUER) return undefined;
  const id = createHash('sha256').update(token).digest('base64url');
  const now = Date.now();
  const known = verified.get(id);
  if (known && known.until > now) return known.payload;
  if (known) verified.delete(id);
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: cfg.OIDC_ISSUER,
      ...(cfg.OIDC_AUDIENCE ? { audience: cfg.OIDC_AUDIENCE } : {}),
      algorithms: acceptedAlgorithms,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_S,
    });
    Object.freeze(payload);
    const until = Math.min(now + VERIFIED_TTL_MS, ((payload.exp as number) + CLOCK_TOLERANCE_S) * 1000);
    if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
    verified.set(id, { payload, until });
    return payload;
  } catch {
    return undefined;
  }
}
