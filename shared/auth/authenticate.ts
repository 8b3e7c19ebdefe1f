import { timingSafeEqual } from 'node:crypto';
import { config } from '#config/env.ts';
import { type ApiKeyCredential, type ApiKeyRepository, hashApiKey } from '#domain/api-keys.ts';
import {
  type ClaimMappingRepository,
  GLOBAL_SCOPE,
  type RoleRule,
  resolveRole,
} from '#domain/claim-mappings.ts';
import { dictionary, own } from '#domain/dictionary.ts';
import { API_KEY_PATTERN, ROLE_ID_PATTERN } from '#domain/identifiers.ts';
import type { TargetLookup, TargetRecords } from '#domain/request-targets.ts';
import {
  hashSecret,
  type Session,
  type SessionCredential,
  type SessionRepository,
  sessionUsable,
} from '#domain/sessions.ts';
import { CSRF_HEADER, parseCookies, SESSION_COOKIE } from './cookies.ts';
import { UnauthenticatedError } from './errors.ts';
import { verifyBearer } from './jwt.ts';
import type { Principal } from './principal.ts';

/** Claim with per-workspace roles (`{"<workspace id or name>": "admin"}`), trusted only when configured. */
export const ROLES_CLAIM = 'geoplane:roles';
/** Claim with the global role (`"super_admin"`), trusted only when configured. */
export const GLOBAL_ROLE_CLAIM = 'geoplane:global_role';

const registeredClaims = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** The stores authentication reads. */
export interface AuthPorts {
  apiKeys: ApiKeyRepository;
  claimMappings: ClaimMappingRepository;
  sessions: SessionRepository;
}

function header(
  headers: Record<string, string | undefined> | null | undefined,
  name: string,
): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {}))
    if (k.toLowerCase() === name && v !== undefined) return v;
  return undefined;
}

/** A principal from the SHA-256 of an API key (re-checked on every request: revoked/expired → 401). */
async function fromKeyHash(ports: AuthPorts, keyHash: string, now: Date): Promise<Principal> {
  return principalFromCredential(await ports.apiKeys.findCredentialByHash(keyHash), now);
}

/** The principal of an API key's credential item as read this request: missing, revoked or expired → 401. */
export function principalFromCredential(credential: ApiKeyCredential | undefined, now: Date): Principal {
  if (!credential || credential.revoked) throw new UnauthenticatedError();
  if (credential.expires_at && Date.parse(credential.expires_at) <= now.getTime())
    throw new UnauthenticatedError();
  const superAdmin = credential.role_id === 'super_admin' && !credential.workspace_id;
  return {
    id: `apikey:${credential.key_id}`,
    subject: credential.owner_name ?? credential.name,
    authMethod: 'apikey',
    superAdmin,
    roles: dictionary(credential.workspace_id ? [[credential.workspace_id, credential.role_id]] : []),
    apiKeyId: credential.key_id,
  };
}

/** Verifies an API key secret and returns its principal. */
export async function principalFromApiKey(
  ports: AuthPorts,
  secret: string,
  now = new Date(),
): Promise<Principal> {
  if (!API_KEY_PATTERN.test(secret)) throw new UnauthenticatedError();
  return fromKeyHash(ports, hashApiKey(secret), now);
}

/**
 * Called once a token's signature or a session checked out, before the reads that derive its
 * roles; `byClaims` says whether its roles come from claims (a token, or a token's session) and
 * so need the claim mapping summaries. It may answer the global scope's mapping rules, read with
 * the request's targets (ADR 0103).
 */
export type OnVerified = (byClaims: boolean) => Promise<readonly RoleRule[] | undefined> | undefined;

/**
 * A principal from verified token claims: global claim mappings (and, when trusted, the role
 * claims) give the global role; workspace mappings are resolved per request by makeHandler.
 * `globalRules` are the global mappings when the caller already has them (the authorizer's
 * BatchGetItem); otherwise they are queried.
 */
async function fromClaims(
  ports: AuthPorts,
  payload: Record<string, unknown>,
  globalRules?: readonly RoleRule[],
): Promise<Principal> {
  const sub = String(payload.sub);
  const claims = Object.fromEntries(Object.entries(payload).filter(([k]) => !registeredClaims.has(k)));
  const roles = dictionary<string>();
  let superAdmin = false;
  if (config().OIDC_TRUST_ROLE_CLAIMS) {
    const claimed = own(payload, ROLES_CLAIM);
    if (claimed && typeof claimed === 'object' && !Array.isArray(claimed)) {
      for (const [ws, role] of Object.entries(claimed as Record<string, unknown>).slice(0, 100)) {
        if (typeof role === 'string' && ROLE_ID_PATTERN.test(role)) roles[ws] = role;
      }
    }
    superAdmin = own(payload, GLOBAL_ROLE_CLAIM) === 'super_admin';
  }
  const globalRole = resolveRole(globalRules ?? (await ports.claimMappings.all(GLOBAL_SCOPE)), claims);
  if (globalRole === 'super_admin') superAdmin = true;
  else if (globalRole) roles['*'] ??= globalRole;
  return {
    id: `jwt:${sub}`,
    subject: sub,
    authMethod: 'jwt',
    superAdmin,
    roles,
    claims,
  };
}

/** Verifies a bearer JWT; returns its principal and the verified claims. */
export async function principalFromBearer(
  ports: AuthPorts,
  token: string,
  onVerified?: OnVerified,
): Promise<{ principal: Principal; payload: Record<string, unknown> }> {
  const payload = await verifyBearer(token);
  if (!payload?.sub) throw new UnauthenticatedError();
  const globalRules = await onVerified?.(true);
  return {
    principal: await fromClaims(ports, payload as Record<string, unknown>, globalRules),
    payload: payload as Record<string, unknown>,
  };
}

/** Re-derives the principal a session stands on. */
async function fromSessionCredential(
  ports: AuthPorts,
  credential: SessionCredential,
  now: Date,
  globalRules?: Promise<readonly RoleRule[] | undefined>,
): Promise<Principal> {
  // An API key's session reads its key beside the targets; a token's waits for the global rules.
  if (credential.type === 'apikey') return fromKeyHash(ports, credential.key_hash, now);
  return fromClaims(ports, { ...credential.claims, sub: credential.sub }, await globalRules);
}

/** A principal carrying the session it came with. */
export function sessionPrincipal(principal: Principal, session: Session, csrfOk: boolean): Principal {
  return {
    ...principal,
    session: {
      id: session.session_id,
      expiresAt: session.expires_at,
      idleExpiresAt: session.idle_expires_at,
      csrfOk,
    },
  };
}

function sameSecret(presented: string | undefined, expectedHash: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(hashSecret(presented), 'hex');
  const b = Buffer.from(expectedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What an authorizer reads beside the credential: the path's `{workspace}` and `{service}` (ADR 0099). */
export interface RequestTarget {
  workspace?: string;
  service?: string;
}

/**
 * Authenticates a request and reads its path's targets in the same round trip (ADR 0099): an API
 * key's credential item and the targets in one BatchGetItem; for a token or a session the targets
 * are read beside the authentication. A failed target read only loses the shortcut (the handler
 * reads them itself); a failed credential read fails the request as before.
 */
export async function authenticateWithTarget(
  headers: Record<string, string | undefined> | null | undefined,
  method: string,
  ports: AuthPorts,
  targets: TargetLookup,
  target: RequestTarget,
  now = new Date(),
): Promise<{ principal: Principal; records?: TargetRecords }> {
  if (target.workspace === undefined) return { principal: await authenticate(headers, method, ports, now) };
  const apiKey = header(headers, 'x-api-key');
  if (apiKey !== undefined) {
    const secret = apiKey.trim();
    if (!API_KEY_PATTERN.test(secret)) throw new UnauthenticatedError();
    const records = await targets.lookUp({ keyHash: hashApiKey(secret), ...target });
    return { principal: principalFromCredential(records.credential, now), records };
  }
  // Started once the credential proved itself (a verified token, a usable session), so a forged one
  // costs no read it did not cost before. For a token's caller it also brings the claim mapping
  // summaries (ADR 0103): the global rules derive its principal, the workspace's its role there;
  // a missing or overflowed summary is queried as before. An API key's session reads none.
  let lookup: Promise<TargetRecords | undefined> | undefined;
  const start = (byClaims: boolean) => {
    lookup ??= targets.lookUp(byClaims ? { ...target, claimRules: true } : target).catch(() => undefined);
    return lookup.then((r) => r?.globalRules);
  };
  const principal = await authenticate(headers, method, ports, now, start);
  start(false);
  const records = await lookup;
  return { principal, ...(records ? { records } : {}) };
}

/**
 * Authenticates a request: `X-API-Key`, else `Authorization: Bearer`, else the session cookie.
 * Every rejection is the same UnauthenticatedError; an explicit credential never falls back.
 * `onVerified` is called once a token's signature or a session checked out, before the reads that
 * derive its roles.
 */
export async function authenticate(
  headers: Record<string, string | undefined> | null | undefined,
  method: string,
  ports: AuthPorts,
  now = new Date(),
  onVerified?: OnVerified,
): Promise<Principal> {
  const apiKey = header(headers, 'x-api-key');
  if (apiKey !== undefined) return principalFromApiKey(ports, apiKey.trim(), now);
  const authorization = header(headers, 'authorization');
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) throw new UnauthenticatedError();
    return (await principalFromBearer(ports, match[1], onVerified)).principal;
  }
  const token = parseCookies(header(headers, 'cookie'))[SESSION_COOKIE];
  if (token) {
    const session = await ports.sessions.findByTokenHash(hashSecret(token));
    if (!session || !sessionUsable(session, now)) throw new UnauthenticatedError();
    const byClaims = session.credential.type !== 'apikey';
    const principal = await fromSessionCredential(ports, session.credential, now, onVerified?.(byClaims));
    const csrfOk =
      safeMethods.has(method.toUpperCase()) || sameSecret(header(headers, CSRF_HEADER), session.csrf_hash);
    return sessionPrincipal(principal, session, csrfOk);
  }
  throw new UnauthenticatedError();
}
