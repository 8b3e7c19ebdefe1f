import { PostgisImportPreviews } from '#datasources/imports/previews.ts';
import type { ImportPreviews } from '#domain/imports.ts';

/*
 * The preview's port (previewImport): staged or published features read from the import database.
 * Apart from `import-engine.ts`, whose workflow step brings the format readers and the loader, so
 * the preview's bundle carries neither (ADR 0153).
 */

let previews: PostgisImportPreviews | undefined;

/** Staged features for the preview (the import database only). */
export function importPreviews(): ImportPreviews {
  previews ??= new PostgisImportPreviews();
  return previews;
}
