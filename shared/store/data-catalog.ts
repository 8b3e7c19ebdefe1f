/**
 * The data plane's catalog reads (ADR 0123): the repositories' own reads, composed into the
 * domain's DataCatalog port. Nothing is cached: every request reads the catalog as it is.
 */
import type { DataCatalog } from '../domain/data-plane.ts';
import type { Style } from '../domain/styles.ts';
import {
  layerRepository,
  serviceRepository,
  settingsRepository,
  styleRepository,
  tileMatrixSetRepository,
} from './repositories.ts';

/** The most styles `/styles` lists. */
const MAX_STYLES = 1000;

/** The data plane's catalog over the single table. */
export function dynamoDataCatalog(): DataCatalog {
  const layers = layerRepository();
  return {
    layers: (workspaceId, limit) => layers.listInWorkspace(workspaceId, limit),
    async layerByPublicId(workspaceId, publicId) {
      const marker = await layers.findPublicId(workspaceId, publicId);
      if (marker?.kind !== 'layer' || !marker.service_id) return undefined;
      return layers.find(workspaceId, marker.service_id, marker.target_id);
    },
    service: (workspaceId, serviceId) => serviceRepository().findById(workspaceId, serviceId),
    settings: settingsRepository(),
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
