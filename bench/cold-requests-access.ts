/** Section 2's cold requests of the meta, auth, workspace, API key, role and claim-mapping routes. */
import { short } from './cold-fixtures.ts';
import type { Case, Kit } from './cold-request-kit.ts';

/** The requests of these routes (see kit). */
export function accessRequests(k: Kit): Record<string, Omit<Case, 'operation'>> {
  const { f, W, get, run, publicGet, call } = k;
  return {
    // meta and auth
    getHealth: { request: publicGet },
    getOpenAPI: { request: publicGet },
    getReadiness: { request: publicGet },
    getConsoleConfig: { request: publicGet },
    getAuthMe: { request: get() },
    listBrowserSessions: { request: get() },
    login: {
      request: call(
        'POST',
        () => null,
        () => ({ body: { token: f.sessionToken }, as: {} }),
      ),
    },
    refreshSession: {
      request: call(
        'POST',
        () => null,
        (r) => ({ as: run(r).refresh }),
      ),
    },
    logout: {
      request: call(
        'POST',
        () => null,
        (r) => ({ as: run(r).logout }),
      ),
    },
    revokeBrowserSession: {
      request: call('DELETE', (r) => ({ session: run(r).revoke })),
    },
    // workspaces
    createWorkspace: {
      request: call(
        'POST',
        () => null,
        () => ({ body: { name: `cold-new-${short()}` } }),
      ),
    },
    getWorkspace: { request: get(W) },
    getWorkspaceDeletionPlan: { request: get(W) },
    getWorkspaceSummary: { request: get(W) },
    listWorkspaces: { request: get(null, { limit: '50' }) },
    updateWorkspace: {
      request: call(
        'PUT',
        () => W,
        () => ({ body: { description: `cold ${short()}` } }),
      ),
    },
    deleteWorkspace: {
      request: call('DELETE', (r) => ({ workspace: run(r).workspace })),
    },
    // API keys
    createAPIKey: {
      request: call(
        'POST',
        () => W,
        () => ({ body: { name: `cold-${short()}`, role_id: 'viewer' } }),
      ),
    },
    getAPIKey: { request: get({ ...W, keyId: f.apiKey }) },
    listAPIKeys: { request: get(W) },
    revokeAPIKey: {
      request: call('DELETE', (r) => ({ ...W, keyId: run(r).apiKey })),
    },
    deleteAPIKey: {
      request: call('DELETE', (r) => ({ ...W, keyId: run(r).apiKeyRevoked })),
    },
    // roles
    createRole: {
      request: call(
        'POST',
        () => null,
        () => ({ body: { id: `cold-new-${short()}`, name: 'Cold' } }),
      ),
    },
    getRole: { request: get({ roleId: f.role }) },
    getRoleDeletionPlan: { request: get({ roleId: f.role }) },
    listRolePolicies: { request: get({ roleId: f.role }) },
    listRoles: { request: get() },
    listWorkspaceRoles: { request: get(W) },
    addRolePolicy: {
      request: call(
        'POST',
        () => ({ roleId: f.role }),
        () => ({
          body: { workspace: '*', service: 'management', operation: 'createLayer', action: 'write' },
        }),
      ),
    },
    removeRolePolicy: {
      request: call('DELETE', (r) => ({ roleId: f.role, policyId: run(r).policy })),
    },
    deleteRole: { request: call('DELETE', (r) => ({ roleId: run(r).role })) },
    // claim mappings
    createClaimMapping: {
      request: call(
        'POST',
        () => W,
        () => ({ body: { claim_name: 'groups', claim_value: `cold-new-${short()}`, role_id: 'viewer' } }),
      ),
    },
    createGlobalClaimMapping: {
      request: call(
        'POST',
        () => null,
        () => ({
          body: { claim_name: 'groups', claim_value: `cold-new-${short()}`, role_id: 'super_admin' },
        }),
      ),
    },
    getClaimMapping: { request: get({ ...W, mappingId: f.mapping }) },
    listClaimMappings: { request: get(W) },
    listGlobalClaimMappings: { request: get() },
    deleteClaimMapping: {
      request: call('DELETE', (r) => ({ ...W, mappingId: run(r).mapping })),
    },
    deleteGlobalClaimMapping: {
      request: call('DELETE', (r) => ({ mappingId: run(r).globalMapping })),
    },
  };
}
