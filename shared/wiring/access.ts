import type { AuthPorts } from '#auth/authenticate.ts';
import type { AccessPorts } from '#auth/workspace-access.ts';
import {
  apiKeyRepository,
  claimMappingRepository,
  roleRepository,
  serviceRepository,
  sessionRepository,
  workspaceRepository,
} from './repositories.ts';

/**
 * The ports of workspace and service access (makeHandler, the deletions' `mayManageWorkspace`). Getters, so a
 * repository is only built when a request reads it.
 */
const access: AccessPorts = {
  get workspaces() {
    return workspaceRepository();
  },
  get claimMappings() {
    return claimMappingRepository();
  },
  get roles() {
    return roleRepository();
  },
  get services() {
    return serviceRepository();
  },
};

/** The ports workspace access reads. */
export function accessPorts(): AccessPorts {
  return access;
}

/** The ports authentication reads (the authorizer, login, refresh, logout). */
export function authPorts(): AuthPorts {
  return {
    apiKeys: apiKeyRepository(),
    claimMappings: claimMappingRepository(),
    sessions: sessionRepository(),
  };
}
