import { type ApiKeyRepository, apiKeyPattern, hashApiKey } from '../domain/api-keys.ts';
import { UnauthenticatedError } from '../http/errors.ts';
import { verifyBearer } from './jwt.ts';
import type { Principal, WorkspaceRole } from './principal.ts';

const workspaceRoles = new Set<string>(['admin', 'editor', 'viewer']);

/** Claim carrying per-workspace roles (`{"<workspace id or name>": "admin"}`) until claim mappings exist. */
export const ROLES_CLAIM = 'geoplane:roles';
/** Claim carrying the global role (`"super_admin"`). */
export const GLOBAL_ROLE_CLAIM = 'geoplane:global_role';

function header(
  headers: Record<string, string | undefined> | null | undefined,
  name: string,
): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {}))
    if (k.toLowerCase() === name && v !== undefined) return v;
  return undefined;
}

async function fromApiKey(repo: ApiKeyRepository, secret: string, now: Date): Promise<Principal> {
  if (!apiKeyPattern.test(secret)) throw new UnauthenticatedError();
  const credential = await repo.findCredentialByHash(hashApiKey(secret));
  if (!credential || credential.revoked) throw new UnauthenticatedError();
  if (credential.expires_at && Date.parse(credential.expires_at) <= now.getTime())
    throw new UnauthenticatedError();
  const superAdmin = credential.role_id === 'super_admin' && !credential.workspace_id;
  const roles: Record<string, WorkspaceRole> = {};
  if (credential.workspace_id && workspaceRoles.has(credential.role_id)) {
    roles[credential.workspace_id] = credential.role_id as WorkspaceRole;
  }
  return {
    id: `apikey:${credential.key_id}`,
    subject: credential.owner_name ?? credential.name,
    authMethod: 'apikey',
    superAdmin,
    roles,
    apiKeyId: credential.key_id,
    usageKey: credential.workspace_id ? `ws:${credential.workspace_id}` : 'global',
  };
}

async function fromBearer(token: string): Promise<Principal> {
  const claims = await verifyBearer(token);
  if (!claims?.sub) throw new UnauthenticatedError();
  const roles: Record<string, WorkspaceRole> = {};
  const claimed = claims[ROLES_CLAIM];
  if (claimed && typeof claimed === 'object' && !Array.isArray(claimed)) {
    for (const [ws, role] of Object.entries(claimed as Record<string, unknown>).slice(0, 100)) {
      if (typeof role === 'string' && workspaceRoles.has(role)) roles[ws] = role as WorkspaceRole;
    }
  }
  const superAdmin = claims[GLOBAL_ROLE_CLAIM] === 'super_admin';
  const firstWorkspace = Object.keys(roles)[0];
  return {
    id: `jwt:${claims.sub}`,
    subject: claims.sub,
    authMethod: 'jwt',
    superAdmin,
    roles,
    usageKey: !superAdmin && firstWorkspace ? `ws:${firstWorkspace}` : 'global',
  };
}

/**
 * Authenticates a request from its headers: `X-API-Key` first, else `Authorization: Bearer`.
 * Every rejection is the same UnauthenticatedError; an explicit credential never falls back.
 */
export async function authenticate(
  headers: Record<string, string | undefined> | null | undefined,
  repo: ApiKeyRepository,
  now = new Date(),
): Promise<Principal> {
  const apiKey = header(headers, 'x-api-key');
  if (apiKey !== undefined) return fromApiKey(repo, apiKey.trim(), now);
  const authorization = header(headers, 'authorization');
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) throw new UnauthenticatedError();
    return fromBearer(match[1]);
  }
  throw new UnauthenticatedError();
}
