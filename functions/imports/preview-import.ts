import { previewImport as operation } from '#api/operations/imports.ts';
import { previewImport } from '#domain/imports.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { importPreviews } from '#wiring/import-previews.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, query }) =>
  ok(
    await previewImport(
      { repo: importRepository(), previews: importPreviews() },
      { workspaceId: workspace.id, import: params.import, layer: query.layer, limit: query.limit ?? 100 },
    ),
  ),
);
