/**
 * The data plane's catalog reads (ADR 0123): the repositories' own reads, composed into the
 * domain's DataCatalog port. Nothing is cached: every request reads the catalog as it is.
 */
import type { DataCatalog, StoredSettings } from '#domain/data-plane.ts';
import type { ServiceRepository } from '#domain/services.ts';
import type { OGCAPISettings, OGCTilesSettings } from '#domain/settings.ts';
import type { Style, StyleRepository } from '#domain/styles.ts';
import type { TileMatrixSetRepository } from '#domain/tile-matrix-sets.ts';
import { documentClient, tableName } from './client.ts';
import { batchGetItems } from './items.ts';
import { keys } from './keys.ts';
import { type DynamoLayerRepository, toLayer } from './layers-repository.ts';
import { toService } from './services-repository.ts';

/** The keys of a workspace's two protocol settings documents. */
function settingsKeys(workspaceId: string) {
  return [keys.settings(workspaceId, 'ogcapi'), keys.settings(workspaceId, 'ogc-tiles')];
}

/** The stored protocol settings among `items` (a document absent: the workspace has the defaults). */
function settingsOf(workspaceId: string, items: readonly Record<string, unknown>[]): StoredSettings {
  const document = (kind: string) =>
    items.find((i) => i.SK === keys.settings(workspaceId, kind).SK)?.document as unknown;
  const ogcapi = document('ogcapi') as OGCAPISettings | undefined;
  const tiles = document('ogc-tiles') as OGCTilesSettings | undefined;
  return { ...(ogcapi ? { ogcapi } : {}), ...(tiles ? { tiles } : {}) };
}

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
  return {
    layers: (workspaceId, limit) => layers.listInWorkspace(workspaceId, limit),
    async protocolSettings(workspaceId) {
      const db = documentClient();
      const table = tableName();
      return settingsOf(workspaceId, await batchGetItems(db, table, settingsKeys(workspaceId)));
    },
    async collection(workspaceId, publicId) {
      const db = documentClient();
      const table = tableName();
      const marker = keys.publicId(workspaceId, publicId);
      const first = await batchGetItems(db, table, [...settingsKeys(workspaceId), marker]);
      const settings = settingsOf(workspaceId, first);
      const found = first.find((i) => i.SK === marker.SK);
      if (found?.kind !== 'layer' || typeof found.service_id !== 'string') return { settings };
      const layerKey = keys.layer(workspaceId, found.service_id, String(found.target_id));
      const serviceKey = keys.service(workspaceId, found.service_id);
      const second = await batchGetItems(db, table, [layerKey, serviceKey]);
      const layer = second.find((i) => i.SK === layerKey.SK);
      const service = second.find((i) => i.SK === serviceKey.SK);
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
