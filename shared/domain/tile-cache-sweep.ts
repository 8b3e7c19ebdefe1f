/**
 * The scheduled sweep's part of the tile cache (ADR 0139). A change never serves a stale tile —
 * the key moves with everything the bytes depend on — but what the old key held stays in the
 * store. The sweep removes it: the tiles of a workspace that no longer exists (however it went),
 * of a layer that no longer exists or is no longer served, and of every fingerprint that is not
 * the layer's current one (a changed layer, a changed budget, a clear). At most
 * {@link TILE_SWEEP_LIMIT} tiles a run; the rest goes on the next.
 */

import type { TileBudget } from './data-plane.ts';
import { currentFingerprint, type ServedLayer, tileBudgetOf } from './data-plane.ts';
import type { OGCTilesSettings } from './settings.ts';
import { layerTilePrefix, type StoredTile, type TileStore, workspaceTilePrefix } from './tile-cache.ts';

/** Tiles one sweep removes at most (the rest goes on the next sweep). */
export const TILE_SWEEP_LIMIT = 5_000;
/** Workspaces, layers and fingerprints one sweep looks at, at most each. */
const CHILDREN = 1_000;

/** A workspace's layers as the sweep needs them: the served ones with their current fingerprint's inputs. */
export interface SweptWorkspace {
  /** Layers whose tiles the data plane serves now, by id. */
  served: Map<string, ServedLayer>;
  /** Every layer of the workspace, by id — when `complete`; else some of them. */
  known: Set<string>;
  complete: boolean;
  tiles: OGCTilesSettings;
  generation: number;
  tilesEpoch: number;
}

/** Ports of the sweep. */
export interface TileSweepPorts {
  store: TileStore;
  /** The workspace as the sweep needs it, or undefined when it no longer exists. */
  workspace(workspaceId: string): Promise<SweptWorkspace | undefined>;
  /** Subtracts removed tiles from an existing workspace's usage. */
  removed(workspaceId: string, entries: number, bytes: number): Promise<void>;
}

export interface TileSweepReport {
  /** Workspaces that are gone, layers gone or not served, stale fingerprints: each removed (partly at the limit). */
  workspaces: number;
  layers: number;
  generations: number;
  tiles: number;
  bytes: number;
}

/** Removes the stale and orphaned tiles of the store, at most {@link TILE_SWEEP_LIMIT}. */
export async function sweepTiles(ports: TileSweepPorts, limit = TILE_SWEEP_LIMIT): Promise<TileSweepReport> {
  const report: TileSweepReport = { workspaces: 0, layers: 0, generations: 0, tiles: 0, bytes: 0 };
  const removeAll = async (prefix: string): Promise<{ entries: number; bytes: number }> => {
    let entries = 0;
    let bytes = 0;
    while (report.tiles < limit) {
      const page = await ports.store.list(prefix, undefined, Math.min(1000, limit - report.tiles));
      if (page.tiles.length === 0) break;
      await ports.store.remove(page.tiles.map((t: StoredTile) => t.key));
      entries += page.tiles.length;
      bytes += page.tiles.reduce((n, t) => n + t.bytes, 0);
      report.tiles += page.tiles.length;
      if (!page.next) break;
    }
    report.bytes += bytes;
    return { entries, bytes };
  };
  for (const workspaceId of await ports.store.children('', CHILDREN)) {
    if (report.tiles >= limit) break;
    const ws = await ports.workspace(workspaceId);
    if (!ws) {
      report.workspaces++;
      await removeAll(workspaceTilePrefix(workspaceId));
      continue;
    }
    const budget: TileBudget = tileBudgetOf(ws.tiles);
    let entries = 0;
    let bytes = 0;
    for (const layerId of await ports.store.children(workspaceTilePrefix(workspaceId), CHILDREN)) {
      if (report.tiles >= limit) break;
      const served = ws.served.get(layerId);
      const prefix = layerTilePrefix(workspaceId, layerId);
      // A layer the listing did not reach may exist: its tiles stay.
      if (!served && !ws.known.has(layerId) && !ws.complete) continue;
      if (!served) {
        report.layers++;
        const gone = await removeAll(prefix);
        entries += gone.entries;
        bytes += gone.bytes;
        continue;
      }
      const current = currentFingerprint(served, budget, ws);
      for (const fingerprint of await ports.store.children(prefix, CHILDREN)) {
        if (fingerprint === current || report.tiles >= limit) continue;
        report.generations++;
        const gone = await removeAll(`${prefix}${fingerprint}/`);
        entries += gone.entries;
        bytes += gone.bytes;
      }
    }
    if (entries > 0) await ports.removed(workspaceId, -entries, -bytes);
  }
  return report;
}
