import { previewImport as operation } from '../../shared/api/operations/imports.ts';
import { previewImport, requireImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importPreviews } from '../../shared/wiring/import-engine.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params, query }) => {
  const job = await requireImport(importRepository(), workspace.id, params.import);
  return ok(await previewImport(importPreviews(), job, query.layer, query.limit ?? 100));
});
