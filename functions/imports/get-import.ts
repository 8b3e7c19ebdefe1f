import { getImport as operation } from '#api/operations/imports.ts';
import { getImport, presentImport } from '#domain/imports.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(
    presentImport(
      await getImport({ repo: importRepository() }, { workspaceId: workspace.id, import: params.import }),
    ),
  ),
);
