import { previewImport as operation } from '../../shared/api/operations/imports.ts';
import { previewImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importPreviews } from '../../shared/wiring/import-engine.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params, query }) =>
  ok(
    await previewImport(
      { repo: importRepository(), previews: importPreviews() },
      { workspaceId: workspace.id, import: params.import, layer: query.layer, limit: query.limit ?? 100 },
    ),
  ),
);
