import { postgisLayerData } from '#datasources/layer-data.ts';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { secretBox } from '#datasources/secret-box.ts';
import type { DataPlanePorts } from '#domain/data-plane.ts';
import { liveConnection, type Service } from '#domain/services.ts';
import type { CacheType } from '#domain/tile-cache.ts';
import type { TileCacheStepDeps } from '#domain/tile-cache-jobs.ts';
import { dataCatalog } from './repositories.ts';
import { cacheCounters, tileCacheJobRepository, tileCachePorts } from './tile-cache.ts';

/**
 * How long a service's opened connection details (its password decrypted) are reused: keyed by
 * the service's version, so a changed password is used at once; saves a KMS Decrypt per request.
 */
const CONNECTION_TTL_MS = 5 * 60_000;
const MAX_CONNECTIONS = 256;
const connections = new Map<string, { at: number; connection: Promise<PostgisConnection> }>();

function connect(service: Service): Promise<PostgisConnection> {
  const key = `${service.workspace_id}/${service.id}@${service.version}`;
  const kept = connections.get(key);
  if (kept && Date.now() - kept.at < CONNECTION_TTL_MS) return kept.connection;
  const connection = liveConnection(secretBox(), service);
  connections.delete(key);
  connections.set(key, { at: Date.now(), connection });
  if (connections.size > MAX_CONNECTIONS) connections.delete(connections.keys().next().value as string);
  connection.catch(() => {
    if (connections.get(key)?.connection === connection) connections.delete(key);
  });
  return connection;
}

let ports: DataPlanePorts | undefined;
let layerData = postgisLayerData(connect);

/** The clear counters this instance's caches were filled under (ADR 0139). */
let seen: { descriptions: number; connections: number; workspaces: Map<string, number> } | undefined;

/**
 * Drops what this instance holds that a clear made stale: every connection after a clear of
 * `connections`, every description after one of `descriptions`, both after a clear of a
 * workspace's caches. Read at most every EPOCH_READ_SECONDS (the counters are kept that long).
 */
async function freshen(workspaceId: string): Promise<void> {
  const c = await cacheCounters(workspaceId);
  const epochs = c.epochs as Record<CacheType, number>;
  seen ??= { descriptions: epochs.descriptions, connections: epochs.connections, workspaces: new Map() };
  const before = seen.workspaces.get(workspaceId);
  const workspaceCleared = before !== undefined && before !== c.generation;
  if (workspaceCleared || seen.connections !== epochs.connections) connections.clear();
  if (workspaceCleared || seen.descriptions !== epochs.descriptions) layerData = postgisLayerData(connect);
  seen.connections = epochs.connections;
  seen.descriptions = epochs.descriptions;
  seen.workspaces.set(workspaceId, c.generation);
  if (seen.workspaces.size > 1024) seen.workspaces.delete(seen.workspaces.keys().next().value as string);
}

/**
 * The data plane's ports (one per process): the catalog over the table, layer data over PostGIS,
 * the persistent tile cache. Every use case reads the workspace's settings first: that read first
 * brings this instance's caches up to the clears.
 */
export function dataPlanePorts(): DataPlanePorts {
  if (!ports) {
    const catalog = dataCatalog();
    const tiles = tileCachePorts();
    ports = {
      catalog: {
        ...catalog,
        protocolSettings: async (workspaceId) => {
          await freshen(workspaceId);
          return catalog.protocolSettings(workspaceId);
        },
        collection: async (workspaceId, publicId) => {
          await freshen(workspaceId);
          return catalog.collection(workspaceId, publicId);
        },
      },
      data: {
        shape: (served) => layerData.shape(served),
        items: (...args) => layerData.items(...args),
        item: (...args) => layerData.item(...args),
        tile: (...args) => layerData.tile(...args),
      },
      ...(tiles ? { tiles } : {}),
    };
  }
  return ports;
}

/** What the tile cache step needs: jobs, the data plane's catalog and layer data, and the cache. */
export function tileCacheStepDeps(): TileCacheStepDeps {
  const ports = dataPlanePorts();
  if (!ports.tiles)
    throw new Error('No tile store is configured (TILE_CACHE_BUCKET or GEOPLANE_TILE_CACHE_DIR).');
  return { jobs: tileCacheJobRepository(), catalog: ports.catalog, data: ports.data, cache: ports.tiles };
}
