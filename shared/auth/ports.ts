import { apiKeyRepository, claimMappingRepository, sessionRepository } from '../store/repositories.ts';
import type { AuthPorts } from './authenticate.ts';

/** The DynamoDB-backed ports authentication reads. */
export function authPorts(): AuthPorts {
  return {
    apiKeys: apiKeyRepository(),
    claimMappings: claimMappingRepository(),
    sessions: sessionRepository(),
  };
}
