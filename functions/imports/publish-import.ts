import { locationOf } from '#api/operation.ts';
import { getImport, publishImport as operation } from '#api/operations/imports.ts';
import { presentImport, publishImport } from '#domain/imports.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { importStarter } from '#wiring/imports.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, params }) => {
  const next = await publishImport(
    { repo: importRepository(), starter: importStarter() },
    { workspaceId: workspace.id, import: params.import },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
