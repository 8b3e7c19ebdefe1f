/**
 * Names in the import database (ADR 0085): an import's staging schema `import_staging_<hex>` and
 * published schema `import_<hex>`, and the table of each plan layer.
 */
import { UUID_PATTERN } from '#domain/identifiers.ts';

const MAX_IDENTIFIER_BYTES = 63;

/** The import's staging and published schema names. */
export interface ImportSchemas {
  staging: string;
  published: string;
}

/** The import's staging and published schema names; throws on an id that isn't a UUID. */
export function importSchemas(importId: string): ImportSchemas {
  if (!UUID_PATTERN.test(importId)) throw new Error(`not an import id: ${JSON.stringify(importId)}`);
  const hex = importId.replaceAll('-', '').toLowerCase();
  return { staging: `import_staging_${hex}`, published: `import_${hex}` };
}

/**
 * Table name for a plan layer: public_id lower-cased, non [a-z0-9_] → '_', a leading digit
 * prefixed with '_', at most 63 bytes. Distinct public ids may give the same name: plan
 * validation (and loadImport) refuse that.
 */
export function layerTableName(publicId: string): string {
  let name = publicId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (name === '') name = 'layer';
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return name.slice(0, MAX_IDENTIFIER_BYTES);
}
