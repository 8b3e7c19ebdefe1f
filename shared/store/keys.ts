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
  service: (workspaceId: string, serviceId: string): Key => ({
    PK: `WS#${workspaceId}`,
    SK: `SERVICE#${serviceId}`,
  }),
  servicePrefix: 'SERVICE#',
  /** Uniqueness marker of a service name within its workspace; holds `service_id`. */
  serviceName: (workspaceId: string, name: string): Key => ({
    PK: `WS#${workspaceId}`,
    SK: `SVCNAME#${name}`,
  }),
  /** Layers sort under their service, so a service's layers are one key range of the workspace partition. */
  layer: (workspaceId: string, serviceId: string, layerId: string): Key => ({
    PK: `WS#${workspaceId}`,
    SK: `LAYER#${serviceId}#${layerId}`,
  }),
  layerPrefix: (serviceId: string) => `LAYER#${serviceId}#`,
  layerGroup: (workspaceId: string, groupId: string): Key => ({
    PK: `WS#${workspaceId}`,
    SK: `GROUP#${groupId}`,
  }),
  layerGroupPrefix: 'GROUP#',
  /** The workspace-wide public id namespace (layers and groups): marker with kind, target and member_of_count. */
  publicId: (workspaceId: string, publicId: string): Key => ({
    PK: `WS#${workspaceId}`,
    SK: `PUBID#${publicId}`,
  }),
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
  service: 'Service',
  serviceName: 'ServiceNameMarker',
  layer: 'Layer',
  layerGroup: 'LayerGroup',
  publicId: 'PublicIdMarker',
  loginFailures: 'LoginFailures',
  claimMappingTriple: 'ClaimMappingTriple',
} as const;
