import { importSchemas, PostgisSourceTables } from '#datasources/integrity-ports.ts';
import { secretBox } from '#datasources/secret-box.ts';
import type { IntegrityDeps } from '#domain/catalog-integrity.ts';
import { DynamoIntegrityInspector } from '#store/catalog-integrity.ts';
import { documentClient, tableName } from '#store/client.ts';
import { workspaceRepository } from './repositories.ts';
import { tileStore } from './tile-cache.ts';

/** The ports of the catalog integrity check and repair (ADR 0138), one inspector per request (it caches roles). */
export function integrityDeps(): IntegrityDeps {
  const schemas = importSchemas();
  const tiles = tileStore();
  return {
    inspector: new DynamoIntegrityInspector(documentClient(), tableName(), {
      sources: new PostgisSourceTables(secretBox()),
      ...(schemas ? { importSchemas: schemas } : {}),
      ...(tiles ? { tiles } : {}),
    }),
    workspaces: workspaceRepository(),
  };
}
