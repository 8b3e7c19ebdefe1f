import { locationOf } from '#api/operation.ts';
import { getImport, startImport as operation } from '#api/operations/imports.ts';
import { presentImport, startImport } from '#domain/imports.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { importStarter, importUploads } from '#wiring/imports.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, params }) => {
  const next = await startImport(
    { repo: importRepository(), uploads: importUploads(), starter: importStarter() },
    { workspaceId: workspace.id, import: params.import },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
