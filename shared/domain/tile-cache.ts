/**
 * The persistent tile cache and the runtime caches (ADR 0139, issue #26). Vector tiles are kept per
 * layer in a tile store (an S3 prefix on AWS, a directory under the data dir locally) under a key
 * that carries everything the tile's bytes depend on: the layer's and its service's versions (an
 * import's replace or append moves the layer's), the tile budget of the Tiles settings and the
 * clear generations. A change therefore misses at once, with no purge to wait for; what it leaves
 * behind is unreachable and is removed by a truncate job. Access is decided before any lookup
 * (the data plane reads a cached tile only for a layer it would render for this caller), and a
 * workspace-wide tile is assembled from its readable layers' tiles, so a cached tile never serves
 * a layer to a caller who may not read it.
 */
import { createHash } from 'node:crypto';
import { InvalidInputError } from './errors.ts';

/** The tile matrix set tiles are cached in (the one the data plane renders). */
export const CACHED_TILE_MATRIX_SET = 'WebMercatorQuad';
/** The deepest zoom the data plane renders (vector-tiles.ts MAX_ZOOM). */
export const MAX_CACHED_ZOOM = 24;

/** One stored tile as a listing sees it. */
export interface StoredTile {
  key: string;
  bytes: number;
}

/** A cached tile of one layer: its MVT bytes and what rendering it reported. */
export interface CachedTile {
  bytes: Uint8Array;
  features: number;
  truncated: boolean;
}

/** Port: where cached tiles live (`shared/platform/tile-store.ts`). Keys are `/`-separated paths. */
export interface TileStore {
  /** The tile, or undefined when it is not stored. */
  get(key: string): Promise<CachedTile | undefined>;
  /** Stores the tile unless one is there already; true when this call stored it. */
  putNew(key: string, tile: CachedTile): Promise<boolean>;
  /** Stores the tile over whatever is there; the size of what it replaced (undefined: nothing). */
  replace(key: string, tile: CachedTile): Promise<number | undefined>;
  /** At most `limit` stored tiles under `prefix` after `after`, in key order, and where to go on. */
  list(
    prefix: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ tiles: StoredTile[]; next?: string }>;
  /** Removes the tiles (idempotent). */
  remove(keys: readonly string[]): Promise<void>;
  /** The names directly under `prefix` that hold tiles (`<workspace>` under ``), at most `limit`. */
  children(prefix: string, limit: number): Promise<string[]>;
}

/** The caches a clear names (`clearCacheByType`'s `{cacheType}`). */
export const CACHE_TYPES = ['tiles', 'descriptions', 'connections'] as const;
export type CacheType = (typeof CACHE_TYPES)[number];

/** What each cache holds and how long, as `getCacheStats` states it. */
export const CACHE_DESCRIPTIONS: Record<
  CacheType,
  { scope: 'persistent' | 'instance'; holds: string; ttl_seconds?: number; max_entries?: number }
> = {
  tiles: { scope: 'persistent', holds: 'vector tiles per layer (the persistent tile cache)' },
  descriptions: {
    scope: 'instance',
    holds: "layer source descriptions (columns, SRID, key) read from each layer's database",
    ttl_seconds: 5,
    max_entries: 512,
  },
  connections: {
    scope: 'instance',
    holds: 'opened service connection details (decrypted passwords), per data-plane instance',
    ttl_seconds: 300,
    max_entries: 256,
  },
};

/** The global clear counters: every cache of a type is stale when its epoch moves. */
export interface CacheEpochs {
  epochs: Record<CacheType, number>;
  cleared_at: Partial<Record<CacheType, string>>;
}

/** A workspace's tile cache record: its clear generation and what its tiles occupy. */
export interface WorkspaceTileCache {
  workspace_id: string;
  /** Moves on every clear of the workspace's caches; tile keys carry it. */
  generation: number;
  /** Tiles stored and their bytes, every generation included (what truncation reclaims). */
  entries: number;
  bytes: number;
  cleared_at?: string;
  /** ETag of the record (moves with the generation). */
  version: number;
}

/** Port: the cache's records in the catalog table. */
export interface CacheRecords {
  epochs(): Promise<CacheEpochs>;
  /** Moves the epochs of `types` (audited); the epochs after. */
  bumpEpochs(types: readonly CacheType[], now: string): Promise<CacheEpochs>;
  workspace(workspaceId: string): Promise<WorkspaceTileCache>;
  /** Moves the workspace's generation (audited); the record after. */
  bumpWorkspace(workspaceId: string, now: string): Promise<WorkspaceTileCache>;
  /** Adds to the workspace's usage (negative to subtract); bookkeeping, not audited. */
  addUsage(workspaceId: string, entries: number, bytes: number): Promise<void>;
}

/** What an instance knows of a workspace's cache (read at most every {@link EPOCH_READ_SECONDS}). */
export interface TileCacheState {
  generation: number;
  tilesEpoch: number;
  /** Bytes the workspace's tiles occupy (for its quota). */
  bytes: number;
}

/** The data plane's view of the tile cache. */
export interface TileCachePorts {
  store: TileStore;
  state(workspaceId: string): Promise<TileCacheState>;
  /** Counts tiles this instance stored (their usage). */
  stored(workspaceId: string, entries: number, bytes: number): Promise<void>;
}

/** The figures a tile's bytes depend on besides its address. */
export interface TileIdentity {
  layerVersion: number;
  serviceVersion: number;
  maxFeatures?: number;
  maxBytes?: number;
  /** The workspace's clear generation and the global tiles epoch. */
  workspaceGeneration: number;
  tilesEpoch: number;
}

/** A short digest of what a tile depends on: a change of any of it is another key. */
export function tileFingerprint(identity: TileIdentity): string {
  const parts = [
    identity.layerVersion,
    identity.serviceVersion,
    identity.maxFeatures ?? 0,
    identity.maxBytes ?? 0,
    identity.workspaceGeneration,
    identity.tilesEpoch,
  ];
  return createHash('sha256').update(parts.join('/')).digest('hex').slice(0, 16);
}

/** A canonical tile address (integers, inside the matrix set). */
export interface TileXYZ {
  z: number;
  x: number;
  y: number;
}

/**
 * The address as integers when it is canonical and inside the set, else undefined: only such an
 * address is looked up or stored (anything else is the renderer's 400/404, never a path).
 */
export function canonicalTile(address: { z: string; x: string; y: string }): TileXYZ | undefined {
  const int = (s: string) => (/^(0|[1-9]\d{0,8})$/.test(s) ? Number(s) : undefined);
  const z = int(address.z);
  const x = int(address.x);
  const y = int(address.y);
  if (z === undefined || x === undefined || y === undefined || z > MAX_CACHED_ZOOM) return undefined;
  const size = 2 ** z;
  return x < size && y < size ? { z, x, y } : undefined;
}

/** Everything of a workspace in the store. */
export function workspaceTilePrefix(workspaceId: string): string {
  return `${workspaceId}/`;
}

/** Everything of one layer (every fingerprint). */
export function layerTilePrefix(workspaceId: string, layerId: string): string {
  return `${workspaceId}/${layerId}/`;
}

/** The key of one tile of a layer at one fingerprint. */
export function tileKey(workspaceId: string, layerId: string, fingerprint: string, t: TileXYZ): string {
  return `${workspaceId}/${layerId}/${fingerprint}/${t.z}/${t.x}/${t.y}.mvt`;
}

/** A stored key read back: its layer, fingerprint and address (undefined: not a tile key). */
export function parseTileKey(
  key: string,
): { workspaceId: string; layerId: string; fingerprint: string; tile: TileXYZ } | undefined {
  const m = /^([^/]+)\/([^/]+)\/([0-9a-f]{16})\/(\d+)\/(\d+)\/(\d+)\.mvt$/.exec(key);
  if (!m) return undefined;
  return {
    workspaceId: m[1] as string,
    layerId: m[2] as string,
    fingerprint: m[3] as string,
    tile: { z: Number(m[4]), x: Number(m[5]), y: Number(m[6]) },
  };
}

/** A bounding box in CRS84: west, south, east, north. */
export type Bbox = readonly [number, number, number, number];

const MAX_LAT = 85.0511287798066;

/** The tile columns and rows of WebMercatorQuad zoom `z` that a CRS84 bbox touches. */
export function tileRange(
  z: number,
  bbox: Bbox | undefined,
): { x0: number; x1: number; y0: number; y1: number } {
  const size = 2 ** z;
  if (!bbox) return { x0: 0, x1: size - 1, y0: 0, y1: size - 1 };
  const [w, s, e, n] = bbox;
  const col = (lon: number) => Math.min(size - 1, Math.max(0, Math.floor(((lon + 180) / 360) * size)));
  const row = (lat: number) => {
    const clamped = Math.max(-MAX_LAT, Math.min(MAX_LAT, lat));
    const rad = (clamped * Math.PI) / 180;
    const y = ((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * size;
    return Math.min(size - 1, Math.max(0, Math.floor(y)));
  };
  return { x0: col(w), x1: col(e), y0: row(n), y1: row(s) };
}

/** How many tiles a zoom range covers within a bbox (per layer). */
export function tilesIn(zoomMin: number, zoomMax: number, bbox: Bbox | undefined): number {
  let n = 0;
  for (let z = zoomMin; z <= zoomMax; z++) {
    const r = tileRange(z, bbox);
    n += (r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1);
  }
  return n;
}

/** Whether a tile lies in the zoom range and touches the bbox. */
export function tileIn(t: TileXYZ, zoomMin: number, zoomMax: number, bbox: Bbox | undefined): boolean {
  if (t.z < zoomMin || t.z > zoomMax) return false;
  const r = tileRange(t.z, bbox);
  return t.x >= r.x0 && t.x <= r.x1 && t.y >= r.y0 && t.y <= r.y1;
}

/** A `{cacheType}` path segment, checked. */
export function parseCacheType(value: string): CacheType {
  if ((CACHE_TYPES as readonly string[]).includes(value)) return value as CacheType;
  throw new InvalidInputError(
    'invalid_cache_type',
    `'${value.slice(0, 64)}' is not a cache type; use one of ${CACHE_TYPES.join(', ')}.`,
    { parameter: 'cacheType', allowed: [...CACHE_TYPES] },
  );
}

/** `getCacheStats`: what each cache is, when it was last cleared, and the epochs. */
export async function cacheStats(records: CacheRecords) {
  const epochs = await records.epochs();
  return {
    caches: CACHE_TYPES.map((type) => ({
      type,
      ...CACHE_DESCRIPTIONS[type],
      epoch: epochs.epochs[type],
      ...(epochs.cleared_at[type] ? { cleared_at: epochs.cleared_at[type] } : {}),
    })),
  };
}

/** Ports of the cache clears: the records, and this instance's own cache state, dropped at once. */
export interface CacheClearDeps {
  records: CacheRecords;
  /** This instance reads the counters again at once (the others within {@link EPOCH_READ_SECONDS}). */
  forgetLocalState(): void;
}

/** `clearAllCaches`: every instance drops them within the epoch read interval. */
export async function clearCaches(
  deps: CacheClearDeps,
  command: { types: readonly CacheType[]; now?: Date },
) {
  const { types, now = new Date() } = command;
  const epochs = await deps.records.bumpEpochs(types, now.toISOString());
  deps.forgetLocalState();
  return {
    cleared: [...types],
    epochs: epochs.epochs,
    effective_within_seconds: EPOCH_READ_SECONDS,
  };
}

/** `clearCacheByType`: the type named in the path (an unknown one is refused), as {@link clearCaches}. */
export function clearCacheByType(deps: CacheClearDeps, command: { cacheType: string; now?: Date }) {
  return clearCaches(deps, { types: [parseCacheType(command.cacheType)], now: command.now });
}

/** `clearWorkspaceCache`: the workspace's tiles miss at once, its instance caches are dropped. */
export async function clearWorkspaceCaches(
  deps: CacheClearDeps,
  command: { workspaceId: string; now?: Date },
) {
  const { workspaceId, now = new Date() } = command;
  const record = await deps.records.bumpWorkspace(workspaceId, now.toISOString());
  deps.forgetLocalState();
  return {
    cleared: [...CACHE_TYPES],
    generation: record.generation,
    effective_within_seconds: EPOCH_READ_SECONDS,
    stale_entries: record.entries,
    stale_bytes: record.bytes,
  };
}

/** Ports of the statistics of a workspace's tile cache. */
export interface TileCacheStatsDeps {
  records: CacheRecords;
  /** Where tiles live (`none`: no store configured). */
  store: 's3' | 'directory' | 'none';
  /** The workspace's OGC API Tiles settings in force. */
  tilesSettings(
    workspaceId: string,
  ): Promise<{ cache_enabled: boolean; persistent_cache_quota_bytes?: number }>;
  /** The workspace's unfinished tile cache job, if any. */
  runningJob(workspaceId: string): Promise<string | undefined>;
}

/** `getPersistentTileCacheStats`: O(1) from the workspace's tile cache record. */
export async function tileCacheStats(deps: TileCacheStatsDeps, { workspaceId }: { workspaceId: string }) {
  const [record, settings, running] = await Promise.all([
    deps.records.workspace(workspaceId),
    deps.tilesSettings(workspaceId),
    deps.runningJob(workspaceId),
  ]);
  return {
    workspace_id: workspaceId,
    store: deps.store,
    cache_enabled: settings.cache_enabled,
    generation: record.generation,
    entries: record.entries,
    bytes: record.bytes,
    ...(settings.persistent_cache_quota_bytes ? { quota_bytes: settings.persistent_cache_quota_bytes } : {}),
    ...(record.cleared_at ? { cleared_at: record.cleared_at } : {}),
    ...(running ? { running_job_id: running } : {}),
  };
}

/** How often an instance reads the clear counters (so a clear reaches every instance within it). */
export const EPOCH_READ_SECONDS = 2;
