import { locationOf } from '#api/operation.ts';
import { getImport, rollbackImport as operation } from '#api/operations/imports.ts';
import { presentImport, rollbackImport } from '#domain/imports.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { importStarter } from '#wiring/imports.ts';
import { deletionRepository, importRepository, serviceRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, params, principal }) => {
  const next = await rollbackImport(
    {
      repo: importRepository(),
      starter: importStarter(),
      services: serviceRepository(),
      deletions: deletionRepository(),
    },
    { workspaceId: workspace.id, import: params.import, workspace, principalId: principal.id },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
