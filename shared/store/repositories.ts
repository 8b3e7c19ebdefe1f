import { DynamoApiKeyRepository } from './api-keys-repository.ts';
import { DynamoClaimMappingRepository } from './claim-mappings-repository.ts';
import { DynamoRoleRepository } from './roles-repository.ts';
import { DynamoSessionRepository } from './sessions-repository.ts';
import { DynamoWorkspaceRepository } from './workspaces-repository.ts';

let workspaces: DynamoWorkspaceRepository | undefined;
let apiKeys: DynamoApiKeyRepository | undefined;

/** The workspace repository (one per process). */
export function workspaceRepository(): DynamoWorkspaceRepository {
  workspaces ??= new DynamoWorkspaceRepository();
  return workspaces;
}

/** The API key repository (one per process). */
export function apiKeyRepository(): DynamoApiKeyRepository {
  apiKeys ??= new DynamoApiKeyRepository();
  return apiKeys;
}

let roles: DynamoRoleRepository | undefined;

/** The role and policy repository (one per process). */
export function roleRepository(): DynamoRoleRepository {
  roles ??= new DynamoRoleRepository();
  return roles;
}

let claimMappings: DynamoClaimMappingRepository | undefined;

/** The claim mapping repository (one per process). */
export function claimMappingRepository(): DynamoClaimMappingRepository {
  claimMappings ??= new DynamoClaimMappingRepository();
  return claimMappings;
}

let sessions: DynamoSessionRepository | undefined;

/** The session repository (one per process). */
export function sessionRepository(): DynamoSessionRepository {
  sessions ??= new DynamoSessionRepository();
  return sessions;
}
