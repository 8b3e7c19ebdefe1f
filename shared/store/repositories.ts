import { DynamoApiKeyRepository } from './api-keys-repository.ts';
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
