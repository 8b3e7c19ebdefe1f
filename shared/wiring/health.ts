import { importDatabaseProbe } from '#datasources/import-database-probe.ts';
import type { ReadinessDeps } from '#domain/health.ts';
import { DynamoCatalogProbe } from '#store/readiness.ts';

let catalog: DynamoCatalogProbe | undefined;

/** The ports of getReadiness: the catalog store's probe and the import database's (ADR 0131). */
export function readinessDeps(): ReadinessDeps {
  catalog ??= new DynamoCatalogProbe();
  const importDatabase = importDatabaseProbe();
  return { catalog, ...(importDatabase ? { importDatabase } : {}), timeoutMs: 4000 };
}
