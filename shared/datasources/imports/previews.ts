import type { ImportPreviews } from '#domain/imports.ts';
import { ImportDatabase } from './database.ts';
import { withDatabase } from './logins.ts';

/** Staged (or published) features of an import, from the import database (no format readers). */
export class PostgisImportPreviews implements ImportPreviews {
  preview(importId: string, table: string, limit: number) {
    return withDatabase((db) => db.preview(importId, table, limit));
  }

  tableName(publicId: string): string {
    return ImportDatabase.tableName(publicId);
  }
}
