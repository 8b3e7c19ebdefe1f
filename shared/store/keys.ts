/**
 * Every key string of the table is built and parsed here and nowhere else. Prefixes are upper
 * case, the separator is `#`, ids and names are kept verbatim (a name may not contain `#`, an id
 * is a UUID; a key is parsed by its prefix, so what follows the prefix comes back unchanged).
 */
export interface Key {
  PK: string;
  SK: string;
}

const WORKSPACE_PARTITION = 'WS#';
const GLOBAL_PARTITION = 'GLOBAL';
const DELETION_PARTITION = 'DELETION#';
const PUBLIC_ID = 'PUBID#';
const ROLE_PARTITION = 'ROLE#';
const ROLE = 'ROLE';
/** Reference records of a role (ADR 0135). */
const ROLE_REF = 'REF#';
const BROWSER_SESSION_PARTITION = 'BROWSERSESSION#';
const BROWSER_SESSION = 'BROWSERSESSION';
const TILE_MATRIX_SET = 'TMS';
const AUDIT_PARTITION = 'AUDIT#';
/** The global audit listing before it was sharded (ADR 0113): still read, never written. */
const AUDIT_LISTING = 'AUDIT';
/**
 * Shards of the global audit listing (ADR 0113): GSI1 partitions `AUDIT#<n>`, n < 16, chosen by
 * a hash of the record id, so no single index partition takes every audited write.
 */
const AUDIT_SHARDS = 16;

/** FNV-1a (32 bit) of a string: a fixed, cheap spread of ids over shards. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
/** Deletion-plan counters (ADR 0101); no entity prefix of `describeKey` starts like this. */
const PLAN_COUNT = 'PLANCOUNT#';
const SUMMARY_COUNT = 'SUMCOUNT#';
/** The usage-key pool (ADR 0111): its assignment counter and one item per slot. */
const USAGE_KEYS_PARTITION = 'USAGEKEYS';
const USAGE_KEY_SLOT = 'SLOT#';

/** What refers to a custom role (ADR 0135): a claim mapping (global without a workspace) or a layer. */
export type RoleReferrer =
  | { kind: 'claim_mapping'; workspaceId?: string; id: string }
  | { kind: 'layer'; workspaceId: string; serviceId: string; id: string };

/** The partition of everything that belongs to a workspace. */
const ws = (workspaceId: string) => `${WORKSPACE_PARTITION}${workspaceId}`;
/** A workspace's partition, or the global one for items that may be either (API keys, claim mappings). */
const scope = (workspaceId: string | undefined) => (workspaceId ? ws(workspaceId) : GLOBAL_PARTITION);

/** What follows `prefix` in a key built by this module (a key without it is a bug, never data). */
function after(prefix: string, value: string): string {
  if (!value.startsWith(prefix)) throw new Error(`Key '${value}' does not start with '${prefix}'.`);
  return value.slice(prefix.length);
}

export const keys = {
  workspace: (workspaceId: string): Key => ({ PK: ws(workspaceId), SK: 'WORKSPACE' }),
  /** Uniqueness marker of a workspace name; holds `workspace_id`. */
  workspaceName: (name: string): Key => ({ PK: `WSNAME#${name}`, SK: 'WSNAME' }),
  /** GSI1 entry that lists workspaces ordered by name. */
  workspaceListing: (name: string) => ({ GSI1PK: 'WORKSPACES', GSI1SK: name }),
  workspaceListingPartition: 'WORKSPACES',
  /** Partition of everything that belongs to a workspace. */
  workspacePartition: (workspaceId: string) => ws(workspaceId),
  /** What every workspace partition starts with (cursor shapes). */
  workspacePartitionPrefix: WORKSPACE_PARTITION,
  apiKey: (workspaceId: string | undefined, keyId: string): Key => ({
    PK: scope(workspaceId),
    SK: `APIKEY#${keyId}`,
  }),
  apiKeyPrefix: 'APIKEY#',
  /** Lookup item of an API key by the SHA-256 hash of its secret. */
  apiKeyHash: (hashHex: string): Key => ({ PK: `APIKEYHASH#${hashHex}`, SK: 'APIKEYHASH' }),
  workspaceItemSortKey: 'WORKSPACE',
  role: (roleId: string): Key => ({ PK: `${ROLE_PARTITION}${roleId}`, SK: ROLE }),
  /** GSI1 entry that lists active custom roles by id. */
  roleListing: (roleId: string) => ({ GSI1PK: 'ROLES', GSI1SK: roleId }),
  roleListingPartition: 'ROLES',
  /** What every role partition starts with (cursor shapes). */
  rolePartitionPrefix: ROLE_PARTITION,
  roleSortKey: ROLE,
  rolePolicy: (roleId: string, policyId: string): Key => ({
    PK: `${ROLE_PARTITION}${roleId}`,
    SK: `POLICY#${policyId}`,
  }),
  rolePolicyPrefix: 'POLICY#',
  /**
   * Reference record (ADR 0135): `referrer` names the role — a claim mapping
   * (`MAPPING#<workspace id or GLOBAL>#<mapping id>`) or a layer's `allowed_roles`
   * (`LAYER#<workspace id>#<service id>#<layer id>`) — written in the transaction that changes the
   * role's `ref_count`, so the role's partition lists what the count is made of.
   */
  roleRef: (roleId: string, referrer: RoleReferrer): Key => ({
    PK: `${ROLE_PARTITION}${roleId}`,
    SK:
      referrer.kind === 'claim_mapping'
        ? `${ROLE_REF}MAPPING#${referrer.workspaceId ?? GLOBAL_PARTITION}#${referrer.id}`
        : `${ROLE_REF}LAYER#${referrer.workspaceId}#${referrer.serviceId}#${referrer.id}`,
  }),
  roleRefPrefix: ROLE_REF,
  /** A claim mapping of a workspace, or a global one (`GLOBAL` partition). */
  claimMapping: (workspaceId: string | undefined, id: string): Key => ({
    PK: scope(workspaceId),
    SK: `CLAIMMAP#${id}`,
  }),
  claimMappingPrefix: 'CLAIMMAP#',
  /** GSI1 entry of a claim mapping by (claim name, value digest), for "which workspaces does this token reach". */
  claimMappingByClaim: (claimDigest: string, scope: string, id: string) => ({
    GSI1PK: `CLAIM#${claimDigest}`,
    GSI1SK: `${scope}#${id}`,
  }),
  claimMappingByClaimPartition: (claimDigest: string) => `CLAIM#${claimDigest}`,
  service: (workspaceId: string, serviceId: string): Key => ({
    PK: ws(workspaceId),
    SK: `SERVICE#${serviceId}`,
  }),
  servicePrefix: 'SERVICE#',
  /** Uniqueness marker of a service name within its workspace; holds `service_id`. */
  serviceName: (workspaceId: string, name: string): Key => ({
    PK: ws(workspaceId),
    SK: `SVCNAME#${name}`,
  }),
  /** Layers sort under their service, so a service's layers are one key range of the workspace partition. */
  layer: (workspaceId: string, serviceId: string, layerId: string): Key => ({
    PK: ws(workspaceId),
    SK: `LAYER#${serviceId}#${layerId}`,
  }),
  layerPrefix: (serviceId: string) => `LAYER#${serviceId}#`,
  /** Every layer of a workspace, whatever its service. */
  layerPrefixAll: 'LAYER#',
  layerGroup: (workspaceId: string, groupId: string): Key => ({
    PK: ws(workspaceId),
    SK: `GROUP#${groupId}`,
  }),
  layerGroupPrefix: 'GROUP#',
  /** The workspace-wide public id namespace (layers and groups): marker with kind, target and member_of_count. */
  publicId: (workspaceId: string, publicId: string): Key => ({
    PK: ws(workspaceId),
    SK: `${PUBLIC_ID}${publicId}`,
  }),
  publicIdPrefix: PUBLIC_ID,
  /** A browser session, by the SHA-256 of its cookie value. */
  session: (tokenHash: string): Key => ({ PK: `SESSION#${tokenHash}`, SK: 'SESSION' }),
  /**
   * The listing entry of a browser session (ADR 0134), by its public id: its own partition (an
   * entity, so a revocation's Delete is audited), listed on GSI1 newest first.
   */
  browserSession: (sessionId: string): Key => ({
    PK: `${BROWSER_SESSION_PARTITION}${sessionId}`,
    SK: BROWSER_SESSION,
  }),
  browserSessionListing: (createdAt: string, sessionId: string) => ({
    GSI1PK: 'BROWSERSESSIONS',
    GSI1SK: `${createdAt}#${sessionId}`,
  }),
  browserSessionListingPartition: 'BROWSERSESSIONS',
  browserSessionPartitionPrefix: BROWSER_SESSION_PARTITION,
  browserSessionSortKey: BROWSER_SESSION,
  /**
   * An idempotency record (ADR 0088), its own partition, keyed by the SHA-256 of its scope
   * (principal, operation, Idempotency-Key): bounded whatever the client's key holds.
   */
  idempotencyRecord: (scopeHashHex: string): Key => ({
    PK: `IDEMPOTENCY#${scopeHashHex}`,
    SK: 'IDEMPOTENCY',
  }),
  /** Failed logins of one client address in one 5-minute window. */
  loginFailures: (address: string, window: number): Key => ({
    PK: `LOGINFAIL#${address}`,
    SK: `WINDOW#${window}`,
  }),
  /**
   * The summary of a scope's claim mappings (ADR 0103): every mapping's rule in one item, written
   * in each create and delete, read in the authorizer's BatchGetItem.
   */
  claimMappingSummary: (workspaceId: string | undefined): Key => ({
    PK: scope(workspaceId),
    SK: 'CLAIMMAPS',
  }),
  /** Uniqueness marker of a (claim name, value, role) triple within a scope. */
  claimMappingTriple: (workspaceId: string | undefined, tripleHash: string): Key => ({
    PK: scope(workspaceId),
    SK: `CLAIMTRIPLE#${tripleHash}`,
  }),
  /** One settings document of a workspace (`wms`, `ogcapi`, `ogc-tiles`); absent means defaults. */
  settings: (workspaceId: string, kind: string): Key => ({ PK: ws(workspaceId), SK: `SETTINGS#${kind}` }),
  settingsPrefix: 'SETTINGS#',
  /** A custom tile matrix set (global); holds `ref_count`, the number of workspaces whose tiles settings name it. */
  tileMatrixSet: (id: string): Key => ({ PK: `${TILE_MATRIX_SET}#${id}`, SK: TILE_MATRIX_SET }),
  /** GSI1 entry that lists custom tile matrix sets by id. */
  tileMatrixSetListing: (id: string) => ({ GSI1PK: 'TILEMATRIXSETS', GSI1SK: id }),
  tileMatrixSetListingPartition: 'TILEMATRIXSETS',
  /** Reference record: workspace `workspaceId`'s tiles settings name tile matrix set `id`. */
  tileMatrixSetSortKey: TILE_MATRIX_SET,
  tileMatrixSetRef: (id: string, workspaceId: string): Key => ({
    PK: `${TILE_MATRIX_SET}#${id}`,
    SK: `REF#${workspaceId}`,
  }),
  tileMatrixSetPartition: (id: string) => `${TILE_MATRIX_SET}#${id}`,
  tileMatrixSetRefPrefix: 'REF#',
  /** A style of a workspace, by name; holds `layer_ref_count` for the layers that use it. */
  style: (workspaceId: string, name: string): Key => ({ PK: ws(workspaceId), SK: `STYLE#${name}` }),
  stylePrefix: 'STYLE#',
  /** A style asset's metadata; holds `ref_count`, the number of styles that reference it. */
  styleAsset: (workspaceId: string, name: string): Key => ({ PK: ws(workspaceId), SK: `ASSET#${name}` }),
  styleAssetPrefix: 'ASSET#',
  /** One chunk of an asset's bytes, content-addressed by the payload's SHA-256. */
  styleAssetChunk: (workspaceId: string, name: string, sha256: string, index: number): Key => ({
    PK: ws(workspaceId),
    SK: `ASSETDATA#${name}#${sha256}#${index}`,
  }),
  /** Reference record: style `style` references asset `asset` (written when the style is saved). */
  styleAssetRef: (workspaceId: string, asset: string, style: string): Key => ({
    PK: ws(workspaceId),
    SK: `ASSETREF#${asset}#${style}`,
  }),
  styleAssetRefPrefix: (asset: string) => `ASSETREF#${asset}#`,
  /** A raster mosaic's committed state (`generation`, `granule_count`); absent before the first harvest. */
  mosaic: (workspaceId: string, serviceId: string): Key => ({
    PK: ws(workspaceId),
    SK: `MOSAIC#${serviceId}`,
  }),
  /** A granule of a mosaic, in every generation it lived (`added_generation`, `removed_generation`). */
  mosaicGranule: (workspaceId: string, serviceId: string, granuleId: string): Key => ({
    PK: ws(workspaceId),
    SK: `GRANULE#${serviceId}#${granuleId}`,
  }),
  mosaicGranulePrefix: (serviceId: string) => `GRANULE#${serviceId}#`,
  /** Every granule of a workspace, whatever its mosaic. */
  mosaicGranulePrefixAll: 'GRANULE#',
  /** A harvest job of a mosaic (ids are time-ordered: the prefix lists them by creation; ADR 0136). */
  mosaicHarvestJob: (workspaceId: string, serviceId: string, jobId: string): Key => ({
    PK: ws(workspaceId),
    SK: `HARVESTJOB#${serviceId}#${jobId}`,
  }),
  mosaicHarvestJobPrefix: (serviceId: string) => `HARVESTJOB#${serviceId}#`,
  /** The marker of a mosaic's unfinished harvest job: one at a time per mosaic (ADR 0136). */
  mosaicHarvestLock: (workspaceId: string, serviceId: string): Key => ({
    PK: ws(workspaceId),
    SK: `HARVESTLOCK#${serviceId}`,
  }),
  /** GSI1 entry of an unfinished harvest job (the local host resumes them after a restart). */
  mosaicHarvestWorking: (jobId: string) => ({ GSI1PK: 'HARVESTS#WORKING', GSI1SK: jobId }),
  mosaicHarvestWorkingPartition: 'HARVESTS#WORKING',
  /** A workspace's tile cache record: its clear generation and its tiles' usage (ADR 0139). */
  workspaceTileCache: (workspaceId: string): Key => ({ PK: ws(workspaceId), SK: 'TILECACHE' }),
  /** A tile cache job (ids are time-ordered: the prefix lists them by creation; ADR 0139). */
  tileCacheJob: (workspaceId: string, jobId: string): Key => ({
    PK: ws(workspaceId),
    SK: `TILEJOB#${jobId}`,
  }),
  tileCacheJobPrefix: 'TILEJOB#',
  /** The marker of a workspace's unfinished tile cache job: one at a time per workspace. */
  tileCacheJobLock: (workspaceId: string): Key => ({ PK: ws(workspaceId), SK: 'TILEJOBLOCK' }),
  /** GSI1 entry of an unfinished tile cache job (the local host resumes them after a restart). */
  tileCacheJobWorking: (jobId: string) => ({ GSI1PK: 'TILEJOBS#WORKING', GSI1SK: jobId }),
  tileCacheJobWorkingPartition: 'TILEJOBS#WORKING',
  /** The global clear counters of the caches (ADR 0139). */
  cacheEpochs: (): Key => ({ PK: GLOBAL_PARTITION, SK: 'CACHEEPOCHS' }),
  /** A recursive deletion operation (its own partition: it outlives the workspace it deletes). */
  deletion: (id: string): Key => ({ PK: `${DELETION_PARTITION}${id}`, SK: 'DELETION' }),
  /** The plan beside an operation, in its partition (plans are large; operations change often). */
  deletionPlan: (id: string): Key => ({ PK: `${DELETION_PARTITION}${id}`, SK: 'PLAN' }),
  deletionPartitionPrefix: DELETION_PARTITION,
  /** GSI1 entry that lists deletion operations, newest first. */
  deletionListing: (createdAt: string, id: string) => ({ GSI1PK: 'DELETIONS', GSI1SK: `${createdAt}#${id}` }),
  deletionListingPartition: 'DELETIONS',
  /**
   * GSI2 entry of a deletion while it is pending or running, removed by the write that finishes
   * it (ADR 0113): what the sweep and a restarting host read, so finished deletions cost nothing.
   */
  deletionActive: (createdAt: string, id: string) => ({
    GSI2PK: 'DELETIONS#ACTIVE',
    GSI2SK: `${createdAt}#${id}`,
  }),
  deletionActivePartition: 'DELETIONS#ACTIVE',
  /**
   * Written once every deletion left active by a version without GSI2 is on it (ADR 0113);
   * `at` says when, for the grace window that catches deletions the previous version still starts.
   */
  deletionActiveIndexed: (): Key => ({ PK: 'DELETIONS', SK: 'ACTIVEINDEXED' }),
  /** How many service deletions run in a workspace (`count`); a workspace deletion waits for zero. */
  activeDeletions: (workspaceId: string): Key => ({ PK: ws(workspaceId), SK: 'ACTIVEDELETIONS' }),
  /** An import job of a workspace (ids are time-ordered: the prefix lists them by creation). */
  importJob: (workspaceId: string, importId: string): Key => ({
    PK: ws(workspaceId),
    SK: `IMPORT#${importId}`,
  }),
  importJobPrefix: 'IMPORT#',
  /** One history event of an import, in order (`seq` = the job version it snapshots). */
  importEvent: (workspaceId: string, importId: string, seq: number): Key => ({
    PK: ws(workspaceId),
    SK: `IMPORTEVENT#${importId}#${String(seq).padStart(8, '0')}`,
  }),
  importEventPrefix: (importId: string) => `IMPORTEVENT#${importId}#`,
  /** GSI1 entry of an import a workflow owns (the local host resumes them after a restart). */
  importWorking: (importId: string) => ({ GSI1PK: 'IMPORTS#WORKING', GSI1SK: importId }),
  importWorkingPartition: 'IMPORTS#WORKING',
  /**
   * What a workspace's imports hold of its import quota (ADR 0110): `rows` and `bytes`, changed
   * in the transaction that changes an import's reservation. Its own item, not the workspace's:
   * every catalog write checks the workspace item, and a counter there would contend with them.
   */
  importUsage: (workspaceId: string): Key => ({ PK: ws(workspaceId), SK: 'IMPORTUSAGE' }),
  /**
   * An audit record (ADR 0094): the workspace's audit partition (`AUDIT#<workspace id>`) or the
   * global one; sort key `<ISO time>#<id>`, so a time window is a key range and newest first is
   * the reverse order. Its own partition: the trail outlives the workspace it records.
   */
  auditRecord: (workspaceId: string | undefined, at: string, id: string): Key => ({
    PK: `${AUDIT_PARTITION}${workspaceId ?? GLOBAL_PARTITION}`,
    SK: `${at}#${id}`,
  }),
  auditPartition: (workspaceId: string | undefined) => `${AUDIT_PARTITION}${workspaceId ?? GLOBAL_PARTITION}`,
  auditPartitionPrefix: AUDIT_PARTITION,
  /**
   * The tally of one caller's refusals of one kind in one window (ADR 0109): beside the records of
   * its audit partition, sorted after every `<ISO time>#…` key, so no listing reads it.
   */
  auditRefusalTally: (workspaceId: string | undefined, kind: string, window: number): Key => ({
    PK: `${AUDIT_PARTITION}${workspaceId ?? GLOBAL_PARTITION}`,
    SK: `~REFUSALS#${kind}#${window}`,
  }),
  /** GSI1 entry that lists every audit record, whatever its scope (the global trail). */
  auditListing: (at: string, id: string) => ({
    GSI1PK: `${AUDIT_LISTING}#${fnv1a(id) % AUDIT_SHARDS}`,
    GSI1SK: `${at}#${id}`,
  }),
  /**
   * Every GSI1 partition of the global audit listing (ADR 0113): the shards, then the unsharded
   * partition the records written before the shards still sit on.
   */
  auditListingPartitions: [
    ...Array.from({ length: AUDIT_SHARDS }, (_, n) => `${AUDIT_LISTING}#${n}`),
    AUDIT_LISTING,
  ] as readonly string[],
  auditUnshardedPartition: AUDIT_LISTING,
  /** The assignment counter of the usage-key pool (`next`: how many workspaces were assigned, ADR 0111). */
  usageKeyCounter: (): Key => ({ PK: USAGE_KEYS_PARTITION, SK: 'COUNTER' }),
  /** The key recorded for one slot of the usage-key pool (slot numbers padded, so the partition lists in slot order). */
  usageKeySlot: (slot: number): Key => ({
    PK: USAGE_KEYS_PARTITION,
    SK: `${USAGE_KEY_SLOT}${String(slot).padStart(6, '0')}`,
  }),
  usageKeySlotPartition: USAGE_KEYS_PARTITION,
  usageKeySlotPrefix: USAGE_KEY_SLOT,
  /** What the readiness probe reads (ADR 0131): no item is ever written here, so a GetItem reads nothing. */
  readinessProbe: (): Key => ({ PK: 'READINESS', SK: 'READINESS' }),
  /** A whole partition (`WS#…`) from the start, for the sweep of a workspace deletion. */
  partitionStart: '',
  /**
   * A service's deletion-plan counters (ADR 0101), all under one prefix of the workspace
   * partition so one Query reads them: the base (present once the counters are exact), the
   * sharded layer counts, and the style/role reference counts by (shard, bucket) or the base's.
   */
  planCountPrefix: (serviceId: string) => `${PLAN_COUNT}${serviceId}#`,
  /** Every service's deletion-plan counters in a workspace (one Query reads them all). */
  planCountPrefixAll: PLAN_COUNT,
  planCountBase: (workspaceId: string, serviceId: string): Key => ({
    PK: ws(workspaceId),
    SK: `${PLAN_COUNT}${serviceId}#BASE`,
  }),
  planCountLayers: (workspaceId: string, serviceId: string, shard: number): Key => ({
    PK: ws(workspaceId),
    SK: `${PLAN_COUNT}${serviceId}#L#${shard}`,
  }),
  planCountRefs: (workspaceId: string, serviceId: string, shard: number | 'BASE', bucket: number): Key => ({
    PK: ws(workspaceId),
    SK: `${PLAN_COUNT}${serviceId}#R#${shard}#${bucket}`,
  }),
  /**
   * A workspace's summary counters (ADR 0137), under one prefix of its partition so one Query reads
   * them: the sharded counts and the base (present once their sum is exact).
   */
  summaryCountPrefix: SUMMARY_COUNT,
  summaryCount: (workspaceId: string, shard: number | 'BASE'): Key => ({
    PK: ws(workspaceId),
    SK: `${SUMMARY_COUNT}${shard}`,
  }),
} as const;

/** The parts of keys that callers need back: ids out of the key strings built above. */
export const parseKey = {
  /** The workspace id of a workspace partition (`WS#<id>`). */
  workspaceId: (pk: string): string => after(WORKSPACE_PARTITION, pk),
  /** The public id of a public id marker's sort key (`PUBID#<public id>`). */
  publicId: (sk: string): string => after(PUBLIC_ID, sk),
  /** What a role's reference record names (`REF#MAPPING#…` / `REF#LAYER#…`, ADR 0135); undefined for other keys. */
  roleReferrer: (sk: string): RoleReferrer | undefined => {
    if (!sk.startsWith(ROLE_REF)) return undefined;
    const [kind, ...parts] = sk.slice(ROLE_REF.length).split('#');
    if (kind === 'MAPPING' && parts.length === 2) {
      const [scope, id] = parts as [string, string];
      return { kind: 'claim_mapping', ...(scope === GLOBAL_PARTITION ? {} : { workspaceId: scope }), id };
    }
    if (kind === 'LAYER' && parts.length === 3) {
      const [workspaceId, serviceId, id] = parts as [string, string, string];
      return { kind: 'layer', workspaceId, serviceId, id };
    }
    return undefined;
  },
  /** The service whose deletion-plan counter a sort key names (`PLANCOUNT#<service id>#…`). */
  planCountService: (sk: string): string => after(PLAN_COUNT, sk).split('#')[0] as string,
  /** The operation id of a deletion partition (`DELETION#<id>`, the operation's and its plan's). */
  deletionId: (pk: string): string => after(DELETION_PARTITION, pk),
} as const;

/** The key of a stored item (its primary key attributes, nothing else). */
export function keyOf(item: Record<string, unknown>): Key {
  return { PK: item.PK as string, SK: item.SK as string };
}

/** Entity tags stored in the `entity` attribute of every item. */
export const entities = {
  workspace: 'Workspace',
  workspaceName: 'WorkspaceNameMarker',
  apiKey: 'ApiKey',
  apiKeyHash: 'ApiKeyHash',
  role: 'Role',
  rolePolicy: 'RolePolicy',
  roleRef: 'RoleRef',
  claimMapping: 'ClaimMapping',
  session: 'Session',
  browserSession: 'BrowserSession',
  idempotencyRecord: 'IdempotencyRecord',
  service: 'Service',
  serviceName: 'ServiceNameMarker',
  layer: 'Layer',
  layerGroup: 'LayerGroup',
  publicId: 'PublicIdMarker',
  loginFailures: 'LoginFailures',
  claimMappingTriple: 'ClaimMappingTriple',
  claimMappingSummary: 'ClaimMappingSummary',
  settings: 'Settings',
  tileMatrixSet: 'TileMatrixSet',
  tileMatrixSetRef: 'TileMatrixSetRef',
  style: 'Style',
  styleAsset: 'StyleAsset',
  styleAssetChunk: 'StyleAssetChunk',
  styleAssetRef: 'StyleAssetRef',
  mosaic: 'Mosaic',
  mosaicGranule: 'MosaicGranule',
  mosaicHarvestJob: 'MosaicHarvestJob',
  mosaicHarvestLock: 'MosaicHarvestLock',
  tileCache: 'TileCache',
  tileCacheJob: 'TileCacheJob',
  tileCacheJobLock: 'TileCacheJobLock',
  cacheEpochs: 'CacheEpochs',
  deletion: 'DeletionOperation',
  activeDeletions: 'ActiveDeletions',
  deletionActiveIndexed: 'DeletionActiveIndexed',
  importJob: 'ImportJob',
  importEvent: 'ImportEvent',
  importUsage: 'ImportUsage',
  auditRecord: 'AuditRecord',
  auditRefusalTally: 'AuditRefusalTally',
  planCounter: 'PlanCounter',
  summaryCounter: 'SummaryCounter',
  usageKeyCounter: 'UsageKeyCounter',
  usageKeySlot: 'UsageKeySlot',
} as const;

/** A catalog entity a key names (ADR 0094): what an audit record and a catalog event report. */
export interface EntityRef {
  /** The entity tag (`entities`), e.g. `Layer`. */
  entity: string;
  /** The entity's own id (a style's or asset's name, a settings document's kind). */
  id: string;
  /** The workspace it belongs to; absent for global entities. */
  workspaceId?: string;
  /** The entity it belongs to, where its id alone is not unique (a layer's service, a policy's role). */
  parentId?: string;
}

/** Sort key prefixes of a workspace partition that name an entity of their own. */
const WORKSPACE_ENTITIES: ReadonlyArray<readonly [string, string, boolean]> = [
  ['SERVICE#', entities.service, false],
  ['LAYER#', entities.layer, true],
  ['GROUP#', entities.layerGroup, false],
  ['STYLE#', entities.style, false],
  ['ASSET#', entities.styleAsset, false],
  ['SETTINGS#', entities.settings, false],
  ['APIKEY#', entities.apiKey, false],
  ['CLAIMMAP#', entities.claimMapping, false],
  ['MOSAIC#', entities.mosaic, false],
  ['HARVESTJOB#', entities.mosaicHarvestJob, true],
  ['TILEJOB#', entities.tileCacheJob, false],
  ['IMPORT#', entities.importJob, false],
];

/**
 * The catalog entity a key names, or undefined for everything else (uniqueness markers, reference
 * records, counters, chunks, history, sessions, idempotency records, audit records).
 */
export function describeKey(key: Key): EntityRef | undefined {
  const { PK, SK } = key;
  if (PK.startsWith(WORKSPACE_PARTITION)) {
    const workspaceId = PK.slice(WORKSPACE_PARTITION.length);
    if (SK === 'WORKSPACE') return { entity: entities.workspace, id: workspaceId, workspaceId };
    if (SK === 'TILECACHE') return { entity: entities.tileCache, id: workspaceId, workspaceId };
    for (const [prefix, entity, nested] of WORKSPACE_ENTITIES) {
      if (!SK.startsWith(prefix)) continue;
      const rest = SK.slice(prefix.length);
      if (!nested) return { entity, id: rest, workspaceId };
      const cut = rest.indexOf('#');
      return { entity, id: rest.slice(cut + 1), workspaceId, parentId: rest.slice(0, cut) };
    }
    return undefined;
  }
  if (PK === GLOBAL_PARTITION) {
    if (SK.startsWith('APIKEY#')) return { entity: entities.apiKey, id: SK.slice('APIKEY#'.length) };
    if (SK.startsWith('CLAIMMAP#'))
      return { entity: entities.claimMapping, id: SK.slice('CLAIMMAP#'.length) };
    if (SK === 'CACHEEPOCHS') return { entity: entities.cacheEpochs, id: 'global' };
    return undefined;
  }
  if (PK.startsWith(ROLE_PARTITION)) {
    const roleId = PK.slice(ROLE_PARTITION.length);
    if (SK === ROLE) return { entity: entities.role, id: roleId };
    if (SK.startsWith('POLICY#'))
      return { entity: entities.rolePolicy, id: SK.slice('POLICY#'.length), parentId: roleId };
    return undefined;
  }
  if (PK.startsWith(`${TILE_MATRIX_SET}#`) && SK === TILE_MATRIX_SET)
    return { entity: entities.tileMatrixSet, id: PK.slice(TILE_MATRIX_SET.length + 1) };
  if (PK.startsWith(BROWSER_SESSION_PARTITION) && SK === BROWSER_SESSION)
    return { entity: entities.browserSession, id: PK.slice(BROWSER_SESSION_PARTITION.length) };
  if (PK.startsWith(DELETION_PARTITION) && SK === 'DELETION')
    return { entity: entities.deletion, id: PK.slice(DELETION_PARTITION.length) };
  return undefined;
}
