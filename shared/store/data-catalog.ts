/**
 * The data plane's catalog reads (ADR 0123): the repositories' own reads, composed into the
 * domain's DataCatalog port. Nothing is answered from memory: every request reads the catalog as
 * it is. What a collection's public id pointed at last time is kept only to know which keys to
 * read (`collection`).
 */
import type { DataCatalog, StoredSettings } from '#domain/data-plane.ts';
import type { ServiceRepository } from '#domain/services.ts';
import type { OGCAPISettings, OGCTilesSettings } from '#domain/settings.ts';
import type { Style, StyleRepository } from '#domain/styles.ts';
import type { TileMatrixSetRepository } from '#domain/tile-matrix-sets.ts';
import { documentClient, tableName } from './client.ts';
import { batchGetItems } from './items.ts';
import { type Key, keys } from './keys.ts';
import { type DynamoLayerRepository, toLayer } from './layers-repository.ts';
import { toService } from './services-repository.ts';

type Item = Record<string, unknown>;

/** The item of `key` among `items`. */
const itemAt = (items: readonly Item[], key: Key): Item | undefined =>
  items.find((i) => i.PK === key.PK && i.SK === key.SK);

/** The keys of a workspace's two protocol settings documents. */
function settingsKeys(workspaceId: string) {
  return [keys.settings(workspaceId, 'ogcapi'), keys.settings(workspaceId, 'ogc-tiles')];
}

/** The stored protocol settings among `items` (a document absent: the workspace has the defaults). */
function settingsOf(workspaceId: string, items: readonly Item[]): StoredSettings {
  const document = (kind: string) => itemAt(items, keys.settings(workspaceId, kind))?.document as unknown;
  const ogcapi = document('ogcapi') as OGCAPISettings | undefined;
  const tiles = document('ogc-tiles') as OGCTilesSettings | undefined;
  return { ...(ogcapi ? { ogcapi } : {}), ...(tiles ? { tiles } : {}) };
}

/** Collections whose public id marker pointed at a layer, kept (oldest dropped first) at most. */
const MAX_TARGETS = 1024;

/** The most styles `/styles` lists. */
const MAX_STYLES = 1000;

/** The repositories the catalog reads through, as accessors (the wiring's: each built on first use). */
export interface DataCatalogRepositories {
  /** The store's own layer repository: the catalog lists a workspace's layers, which no domain port declares. */
  layerRepository: () => DynamoLayerRepository;
  serviceRepository: () => ServiceRepository;
  styleRepository: () => StyleRepository;
  tileMatrixSetRepository: () => TileMatrixSetRepository;
}

/** The data plane's catalog over the single table. */
export function dynamoDataCatalog({
  layerRepository,
  serviceRepository,
  styleRepository,
  tileMatrixSetRepository,
}: DataCatalogRepositories): DataCatalog {
  const layers = layerRepository();
  /** Where each collection's public id marker pointed when last read, by workspace and public id. */
  const targets = new Map<string, { serviceId: string; layerId: string }>();
  return {
    layers: (workspaceId, limit) => layers.listInWorkspace(workspaceId, limit),
    async protocolSettings(workspaceId) {
      const db = documentClient();
      const table = tableName();
      return settingsOf(workspaceId, await batchGetItems(db, table, settingsKeys(workspaceId)));
    },
    /**
     * The settings and the marker, then the layer and its service: two round trips. When the
     * marker pointed at a layer last time, that layer and service are read in the first round
     * beside it, and used only if the marker read with them still points there (the marker and
     * the layer's public id change in one transaction); else the second round reads where it
     * points now.
     */
    async collection(workspaceId, publicId) {
      const db = documentClient();
      const table = tableName();
      const marker = keys.publicId(workspaceId, publicId);
      const remembered = `${workspaceId}/${publicId}`;
      const last = targets.get(remembered);
      const guessed = last
        ? [keys.layer(workspaceId, last.serviceId, last.layerId), keys.service(workspaceId, last.serviceId)]
        : [];
      const first = await batchGetItems(db, table, [...settingsKeys(workspaceId), marker, ...guessed]);
      const settings = settingsOf(workspaceId, first);
      const found = itemAt(first, marker);
      targets.delete(remembered);
      if (found?.kind !== 'layer' || typeof found.service_id !== 'string') return { settings };
      const target = { serviceId: found.service_id, layerId: String(found.target_id) };
      targets.set(remembered, target);
      if (targets.size > MAX_TARGETS) targets.delete(targets.keys().next().value as string);
      const layerKey = keys.layer(workspaceId, target.serviceId, target.layerId);
      const serviceKey = keys.service(workspaceId, target.serviceId);
      const second =
        last?.serviceId === target.serviceId && last.layerId === target.layerId
          ? first
          : await batchGetItems(db, table, [layerKey, serviceKey]);
      const layer = itemAt(second, layerKey);
      const service = itemAt(second, serviceKey);
      return {
        settings,
        ...(layer ? { layer: toLayer(layer) } : {}),
        ...(service ? { service: toService(service) } : {}),
      };
    },
    service: (workspaceId, serviceId) => serviceRepository().findById(workspaceId, serviceId),
    styles: {
      find: (workspaceId, name) => styleRepository().find(workspaceId, name),
      async all(workspaceId) {
        const out: Omit<Style, 'body'>[] = [];
        let cursor: string | undefined;
        do {
          const page = await styleRepository().list(workspaceId, 100, cursor);
          out.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor && out.length < MAX_STYLES);
        return out;
      },
    },
    tileMatrixSets: tileMatrixSetRepository(),
  };
}
