import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError, StateConflictError } from './errors.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import { checkVersion, underIfMatch } from './workspaces.ts';

/** Roles an API key may carry. `super_admin` exists only for global bootstrap keys. */
export type KeyRole = 'admin' | 'editor' | 'viewer' | 'super_admin';

/** An API key as stored (never with its secret). */
export interface ApiKey {
  id: string;
  workspace_id?: string;
  name: string;
  role_id: KeyRole;
  key_prefix: string;
  key_hash: string;
  revoked: boolean;
  expires_at?: string;
  owner_email?: string;
  owner_name?: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The authentication view of a key, read by hash. */
export interface ApiKeyCredential {
  key_id: string;
  workspace_id?: string;
  role_id: KeyRole;
  revoked: boolean;
  expires_at?: string;
  name: string;
  owner_name?: string;
}

/** Port: API key persistence. */
export interface ApiKeyRepository {
  /** Stores the key and its credential item (with the workspace's usage key, if any). */
  create(key: ApiKey): Promise<void>;
  find(workspaceId: string | undefined, keyId: string): Promise<ApiKey | undefined>;
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<ApiKey>>;
  /** Marks the key revoked (version + 1); with `version` only while it is still at it (`concurrent_modification` otherwise). */
  revoke(key: ApiKey, now: string, version?: number): Promise<void>;
  /**
   * Removes a revoked key's record and its hash item for good, in one transaction, while the key is
   * still revoked and at `version` (gone meanwhile: `api_key_not_found`).
   */
  delete(key: ApiKey): Promise<void>;
  findCredentialByHash(hashHex: string): Promise<ApiKeyCredential | undefined>;
}

export const API_KEY_PREFIX = 'gpk_';

/** SHA-256 hex of a full key: the only form in which a key is stored. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Mints a new key secret. */
export function newApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Creates a key; returns the stored record and the secret, which is never available again. */
export async function createApiKey(
  { keys: repo }: ApiKeyDeps,
  {
    workspaceId,
    body: input,
    now = new Date(),
  }: {
    /** The key's workspace; none for a global key (the bootstraps' super_admin). */
    workspaceId: string | undefined;
    body: { name: string; role_id: KeyRole; expires_at?: string; owner_email?: string; owner_name?: string };
    now?: Date;
  },
): Promise<{ key: ApiKey; secret: string }> {
  if (input.expires_at !== undefined && Date.parse(input.expires_at) <= now.getTime()) {
    throw new InvalidInputError('expires_at_in_past', 'expires_at must be in the future.');
  }
  const secret = newApiKeySecret();
  const ts = now.toISOString();
  const key: ApiKey = {
    id: randomUUID(),
    ...(workspaceId ? { workspace_id: workspaceId } : {}),
    name: input.name,
    role_id: input.role_id,
    key_prefix: secret.slice(0, 12),
    key_hash: hashApiKey(secret),
    revoked: false,
    ...(input.expires_at ? { expires_at: new Date(input.expires_at).toISOString() } : {}),
    ...(input.owner_email ? { owner_email: input.owner_email } : {}),
    ...(input.owner_name ? { owner_name: input.owner_name } : {}),
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await repo.create(key);
  return { key, secret };
}

/** Reads a key of a workspace; a key of another workspace is not found. */
export async function requireApiKey(
  repo: ApiKeyRepository,
  workspaceId: string | undefined,
  keyId: string,
): Promise<ApiKey> {
  // Key ids are stored lower case; UUIDs compare case-insensitively, as workspace ids do.
  const key = await repo.find(workspaceId, keyId.toLowerCase());
  if (!key)
    throw new NotFoundError('api_key_not_found', `API key '${keyId}' does not exist in this workspace.`);
  return key;
}

/** Ports of the API key use cases. */
export interface ApiKeyDeps {
  keys: ApiKeyRepository;
}

/** What a use case on one key is asked: the key the path names in its workspace. */
export interface ApiKeyCommand {
  /** The key's workspace; undefined for a global key (the CLI's bootstrap --revoke). */
  workspaceId: string | undefined;
  keyId: string;
  ifMatch?: string;
}

/** Reads a key of a workspace (getAPIKey): 404 for a key of another workspace. */
export function getApiKey({ keys }: ApiKeyDeps, { workspaceId, keyId }: ApiKeyCommand): Promise<ApiKey> {
  return requireApiKey(keys, workspaceId, keyId);
}

/** A page of the workspace's keys (listAPIKeys). */
export function listApiKeys({ keys }: ApiKeyDeps, query: WorkspacePageQuery): Promise<Page<ApiKey>> {
  return keys.list(query.workspaceId, query.limit, query.cursor);
}

/**
 * Revokes a key (idempotent: revoking a revoked key changes nothing). Honours If-Match on the
 * key's version (its ETag); the write is conditioned on it, so a concurrent revoke is a 412 too.
 */
export async function revokeApiKey(
  { keys: repo }: ApiKeyDeps,
  { workspaceId, keyId, ifMatch, now = new Date() }: ApiKeyCommand & { now?: Date },
): Promise<void> {
  const key = await requireApiKey(repo, workspaceId, keyId);
  checkVersion(key, ifMatch);
  if (key.revoked) return;
  const version = ifMatch === undefined ? undefined : key.version;
  await underIfMatch(ifMatch, () => repo.revoke(key, now.toISOString(), version));
}

/**
 * Deletes a key for good (deleteAPIKey, ADR 0131): only a revoked key, so a key can never stop
 * working and vanish from the list in one step (409 `api_key_not_revoked` otherwise, expired
 * included: revoke it first). Honours If-Match on the key's version. Audited as the key's deletion.
 */
export async function deleteApiKey(
  { keys: repo }: ApiKeyDeps,
  { workspaceId, keyId, ifMatch }: ApiKeyCommand & { workspaceId: string },
): Promise<void> {
  const key = await requireApiKey(repo, workspaceId, keyId);
  checkVersion(key, ifMatch);
  if (!key.revoked) {
    throw new StateConflictError(
      'api_key_not_revoked',
      `API key '${key.id}' is not revoked; revoke it first (DELETE …/apikeys/${key.id}), then delete it for good.`,
    );
  }
  await repo.delete(key);
}

/** The public view of a key: everything but the hash (its `version` is the ETag If-Match names). */
export function publicApiKey(key: ApiKey) {
  const { key_hash: _hash, updated_at: _updated, ...rest } = key;
  return rest;
}
