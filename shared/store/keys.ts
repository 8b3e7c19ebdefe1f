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
} as const;

/** Entity tags stored in the `entity` attribute of every item. */
export const entities = {
  workspace: 'Workspace',
  workspaceName: 'WorkspaceNameMarker',
  apiKey: 'ApiKey',
  apiKeyHash: 'ApiKeyHash',
} as const;
