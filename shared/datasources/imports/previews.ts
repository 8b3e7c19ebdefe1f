import type { ImportPreviews } from '#domain/imports.ts';
import { ImportConnection, onConnection } from './database-connection.ts';
import { layerTableName } from './database-names.ts';
import { preview } from './database-preview.ts';
import { withLogin } from './logins.ts';

/**
 * Staged (or published) features of an import, from the import database (no format readers). On a
 * connection of its own rather than an ImportDatabase session, so previewImport's bundle carries
 * none of the import's staging, finalising and publishing code (ADR 0153).
 */
export class PostgisImportPreviews implements ImportPreviews {
  preview(importId: string, table: string, limit: number) {
    return withLogin((connection) =>
      onConnection(connection, (client) => preview(new ImportConnection(client), importId, table, limit)),
    );
  }

  tableName(publicId: string): string {
    return layerTableName(publicId);
  }
}
