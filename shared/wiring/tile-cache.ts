/*
 * The ports of the tile cache (ADR 0139), built once per process on first use: the tile store
 * (S3 or a directory, by configuration), the cache records in the table, what this instance knows
 * of them (read at most every EPOCH_READ_SECONDS), the job repository and the workflow starter.
 */
import { tileCacheLocation } from '#config/env.ts';
import { type ServedLayer, serves } from '#domain/data-plane.ts';
import { defaultSettings } from '#domain/settings.ts';
import {
  type CacheClearDeps,
  type CacheEpochs,
  type CacheRecords,
  EPOCH_READ_SECONDS,
  type TileCachePorts,
  type TileCacheState,
  type TileCacheStatsDeps,
  type TileStore,
} from '#domain/tile-cache.ts';
import type { TileCacheJobDeps, TileCacheJobRepository, TileCacheStarter } from '#domain/tile-cache-jobs.ts';
import { sweepTiles, type TileSweepReport } from '#domain/tile-cache-sweep.ts';
import { DirectoryTileStore, S3TileStore } from '#platform/tile-store.ts';
import { DynamoCacheRecords, DynamoTileCacheJobRepository } from '#store/tile-cache-repository.ts';
import { dataCatalog, workspaceRepository } from './repositories.ts';
import { workflowStarter } from './workflows.ts';

let records: CacheRecords | undefined;
let jobs: TileCacheJobRepository | undefined;
let store: TileStore | null | undefined;

/** The caches' records in the table. */
export function cacheRecords(): CacheRecords {
  records ??= new DynamoCacheRecords();
  return records;
}

/** The tile cache job repository. */
export function tileCacheJobRepository(): TileCacheJobRepository {
  jobs ??= new DynamoTileCacheJobRepository();
  return jobs;
}

/** Starts the tile cache workflow (Step Functions, or the local runner). */
export function tileCacheStarter(): TileCacheStarter {
  return workflowStarter();
}

/** The tile store the configuration names, or undefined (no persistent tile cache). */
export function tileStore(): TileStore | undefined {
  if (store === undefined) {
    const where = tileCacheLocation();
    store = !where
      ? null
      : 'bucket' in where
        ? new S3TileStore(where.bucket)
        : new DirectoryTileStore(where.directory);
  }
  return store ?? undefined;
}

const READ_MS = EPOCH_READ_SECONDS * 1000;
let epochs: { at: number; value: Promise<CacheEpochs> } | undefined;
const workspaces = new Map<string, { at: number; value: Promise<{ generation: number; bytes: number }> }>();
const MAX_WORKSPACES = 1024;

function currentEpochs(): Promise<CacheEpochs> {
  if (!epochs || Date.now() - epochs.at >= READ_MS) {
    const value = cacheRecords().epochs();
    epochs = { at: Date.now(), value };
    value.catch(() => {
      if (epochs?.value === value) epochs = undefined;
    });
  }
  return epochs.value;
}

function currentWorkspace(workspaceId: string): Promise<{ generation: number; bytes: number }> {
  const kept = workspaces.get(workspaceId);
  if (kept && Date.now() - kept.at < READ_MS) return kept.value;
  const value = cacheRecords()
    .workspace(workspaceId)
    .then((r) => ({ generation: r.generation, bytes: r.bytes }));
  workspaces.delete(workspaceId);
  workspaces.set(workspaceId, { at: Date.now(), value });
  if (workspaces.size > MAX_WORKSPACES) workspaces.delete(workspaces.keys().next().value as string);
  value.catch(() => {
    if (workspaces.get(workspaceId)?.value === value) workspaces.delete(workspaceId);
  });
  return value;
}

/** What this instance knows of the caches' records is read again on next use (a clear made here). */
export function forgetCacheState(): void {
  epochs = undefined;
  workspaces.clear();
}

/** The clear counters in force for a workspace: the global epochs and the workspace's generation. */
export async function cacheCounters(workspaceId: string) {
  const [e, w] = await Promise.all([currentEpochs(), currentWorkspace(workspaceId)]);
  return { epochs: e.epochs, generation: w.generation, bytes: w.bytes };
}

/** The data plane's and the jobs' view of the tile cache, or undefined without a tile store. */
export function tileCachePorts(): TileCachePorts | undefined {
  const tiles = tileStore();
  if (!tiles) return undefined;
  return {
    store: tiles,
    async state(workspaceId): Promise<TileCacheState> {
      const c = await cacheCounters(workspaceId);
      return { generation: c.generation, tilesEpoch: c.epochs.tiles, bytes: c.bytes };
    },
    async stored(workspaceId, entries, bytes) {
      await cacheRecords().addUsage(workspaceId, entries, bytes);
      const kept = workspaces.get(workspaceId);
      if (kept) kept.value = kept.value.then((w) => ({ ...w, bytes: w.bytes + bytes }));
    },
  };
}

/** What the statistics of a workspace's tile cache read. */
export function tileCacheStatsDeps(): TileCacheStatsDeps {
  const where = tileCacheLocation();
  const catalog = dataCatalog();
  return {
    records: cacheRecords(),
    store: !where ? 'none' : 'bucket' in where ? 's3' : 'directory',
    tilesSettings: async (workspaceId) => {
      const stored = await catalog.protocolSettings(workspaceId);
      return (stored.tiles ?? defaultSettings['ogc-tiles']).settings;
    },
    runningJob: (workspaceId) => tileCacheJobRepository().runningJob(workspaceId),
  };
}

/** What the job routes need: jobs, the catalog's layers and settings, the workflow starter. */
export function tileCacheJobDeps(): TileCacheJobDeps {
  return { jobs: tileCacheJobRepository(), catalog: dataCatalog(), starter: tileCacheStarter() };
}

/** What the cache clears need: the records, and this instance's cache state to drop at once. */
export function cacheClearDeps(): CacheClearDeps {
  return { records: cacheRecords(), forgetLocalState: forgetCacheState };
}

/** Layers of one workspace the sweep reads at most (beyond them, unknown layers' tiles stay). */
const SWEEP_LAYERS = 5_000;

/** The sweep's removal of stale and orphaned tiles (nothing without a tile store). */
export async function sweepTileStore(): Promise<TileSweepReport | undefined> {
  const store = tileStore();
  if (!store) return undefined;
  const workspaces = workspaceRepository();
  const catalog = dataCatalog();
  const records = cacheRecords();
  return sweepTiles({
    store,
    async workspace(workspaceId) {
      if (!(await workspaces.findById(workspaceId))) return undefined;
      const [layers, settings, record, epochs] = await Promise.all([
        catalog.layers(workspaceId, SWEEP_LAYERS),
        catalog.protocolSettings(workspaceId),
        records.workspace(workspaceId),
        records.epochs(),
      ]);
      const serviceIds = [...new Set(layers.map((l) => l.service_id))];
      const services = new Map(
        await Promise.all(
          serviceIds.map(async (id) => [id, await catalog.service(workspaceId, id)] as const),
        ),
      );
      const served = new Map<string, ServedLayer>();
      for (const layer of layers) {
        const service = services.get(layer.service_id);
        if (layer.enabled && serves(service)) served.set(layer.id, { layer, service });
      }
      return {
        served,
        known: new Set(layers.map((l) => l.id)),
        complete: layers.length < SWEEP_LAYERS,
        tiles: settings.tiles ?? defaultSettings['ogc-tiles'],
        generation: record.generation,
        tilesEpoch: epochs.epochs.tiles,
      };
    },
    removed: (workspaceId, entries, bytes) => records.addUsage(workspaceId, entries, bytes),
  });
}
