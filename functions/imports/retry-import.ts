import { locationOf } from '#api/operation.ts';
import { getImport, retryImport as operation } from '#api/operations/imports.ts';
import { presentImport, retryImport } from '#domain/imports.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { importLimits, importStarter } from '#wiring/imports.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, params }) => {
  const next = await retryImport(
    { repo: importRepository(), starter: importStarter(), limits: importLimits() },
    { workspaceId: workspace.id, import: params.import },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
