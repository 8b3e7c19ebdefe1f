/**
 * Every key string of the table is built here and nowhere else. Prefixes are upper case, the
 * separator is `#`, names are kept verbatim.
 */
export interface Key {
  PK: string;
  SK: string;
}

export const keys = {
  workspace: (workspaceId: string): Key => ({ PK: `WS#${workspaceId}`, SK: 'WORKSPACE' }),
  /** Uniqueness marker of a workspace name; holds `workspace_id`. */
  workspaceName: (name: string): Key => ({ PK: `WSNAME#${name}`, SK: 'WSNAME' }),
  /** GSI1 entry that lists workspaces ordered by name. */
  workspaceListing: (name: string) => ({ GSI1PK: 'WORKSPACES', GSI1SK: name }),
  workspaceListingPartition: 'WORKSPACES',
  /** Partition of everything that belongs to a workspace. */
  workspacePartition: (workspaceId: string) => `WS#${workspaceId}`,
  apiKey: (workspaceId: string | undefined, keyId: string): Key => ({
    PK: workspaceId ? `WS#${workspaceId}` : 'GLOBAL',
    SK: `APIKEY#${keyId}`,
  }),
  apiKeyPrefix: 'APIKEY#',
  /** Lookup item of an API key by the SHA-256 hash of its secret. */
  apiKeyHash: (hashHex: string): Key => ({ PK: `APIKEYHASH#${hashHex}`, SK: 'APIKEYHASH' }),
  workspaceItemSortKey: 'WORKSPACE',
  role: (roleId: string): Key => ({ PK: `ROLE#${roleId}`, SK: 'ROLE' }),
  /** GSI1 entry that lists active custom roles by id. */
  roleListing: (roleId: string) => ({ GSI1PK: 'ROLES', GSI1SK: roleId }),
  roleListingPartition: 'ROLES',
  rolePolicy: (roleId: string, policyId: string): Key => ({ PK: `ROLE#${roleId}`, SK: `POLICY#${policyId}` }),
  rolePolicyPrefix: 'POLICY#',
  /** A claim mapping of a workspace, or a global one (`GLOBAL` partition). */
  claimMapping: (workspaceId: string | undefined, id: string): Key => ({
    PK: workspaceId ? `WS#${workspaceId}` : 'GLOBAL',
    SK: `CLAIMMAP#${id}`,
  }),
  claimMappingPrefix: 'CLAIMMAP#',
  /** Uniqueness marker of a (claim name, value, role) triple within a scope. */
  /** GSI1 entry of a claim mapping by (claim name, value digest), for "which workspaces does this token reach". */
  claimMappingByClaim: (claimDigest: string, scope: string, id: string) => ({
    GSI1PK: `CLAIM#${claimDigest}`,
    GSI1SK: `${scope}#${id}`,
  }),
  claimMappingByClaimPartition: (claimDigest: string) => `CLAIM#${claimDigest}`,
  /** A browser session, by the SHA-256 of its cookie value. */
  session: (tokenHash: string): Key => ({ PK: `SESSION#${tokenHash}`, SK: 'SESSION' }),
  /** Failed logins of one client address in one 5-minute window. */
  loginFailures: (address: string, window: number): Key => ({
    PK: `LOGINFAIL#${address}`,
    SK: `WINDOW#${window}`,
  }),
  claimMappingTriple: (workspaceId: string | undefined, tripleHash: string): Key => ({
    PK: workspaceId ? `WS#${workspaceId}` : 'GLOBAL',
    SK: `CLAIMTRIPLE#${tripleHash}`,
  }),
} as const;

/** Entity tags stored in the `entity` attribute of every item. */
export const entities = {
  workspace: 'Workspace',
  workspaceName: 'WorkspaceNameMarker',
  apiKey: 'ApiKey',
  apiKeyHash: 'ApiKeyHash',
  role: 'Role',
  rolePolicy: 'RolePolicy',
  claimMapping: 'ClaimMapping',
  session: 'Session',
  loginFailures: 'LoginFailures',
  claimMappingTriple: 'ClaimMappingTriple',
} as const;
