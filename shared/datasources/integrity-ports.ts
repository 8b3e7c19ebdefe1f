/**
 * The catalog integrity check's ports onto PostgreSQL (ADR 0138): the source tables of a
 * service's layers, read with the service's own login, and the import database's schemas.
 */
import { importConfig } from '#config/env.ts';
import type { ImportSchemas, SourceTables } from '#domain/catalog-integrity.ts';
import type { SecretBox } from '#domain/secrets.ts';
import { liveConnection, type Service } from '#domain/services.ts';
import { withDatabase } from './imports/database.ts';
import { missingRelations } from './postgis-discovery.ts';

/** Looks the layers' tables up in the service's database, as the service connects (network policy included). */
export class PostgisSourceTables implements SourceTables {
  constructor(private readonly box: SecretBox) {}

  async missing(service: Service, sourceLayers: string[]): Promise<string[]> {
    return missingRelations(await liveConnection(this.box, service), sourceLayers);
  }
}

/** `import_<32 hex>` and `import_staging_<32 hex>`: the schemas an import owns (ADR 0085). */
const IMPORT_SCHEMA = /^import_(?:staging_)?([0-9a-f]{32})$/;

function importIdOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The import database's import schemas, as its loader sees them. */
export class ImportDatabaseSchemas implements ImportSchemas {
  async list(): Promise<{ schema: string; importId: string }[]> {
    const relations = await withDatabase((db) => db.importRelations());
    const schemas = new Map<string, string>();
    for (const { schema } of relations) {
      const hex = IMPORT_SCHEMA.exec(schema)?.[1];
      if (hex) schemas.set(schema, importIdOf(hex));
    }
    return [...schemas].map(([schema, importId]) => ({ schema, importId }));
  }

  drop(importId: string): Promise<void> {
    return withDatabase((db) => db.dropAll(importId));
  }
}

/** The port, or undefined on a stage without an import database. */
export function importSchemas(): ImportSchemas | undefined {
  return importConfig().database ? new ImportDatabaseSchemas() : undefined;
}
