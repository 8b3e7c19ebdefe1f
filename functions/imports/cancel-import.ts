import { locationOf } from '#api/operation.ts';
import { getImport, cancelImport as operation } from '#api/operations/imports.ts';
import { cancelImport, presentImport } from '#domain/imports.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { accepted, noContent } from '#http/responses.ts';
import { importStarter, importUploads } from '#wiring/imports.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const outcome = await cancelImport(
    { repo: importRepository(), uploads: importUploads(), starter: importStarter() },
    { workspaceId: workspace.id, import: params.import, ifMatch },
  );
  if (outcome.done) return noContent();
  return accepted(
    presentImport(outcome.job),
    locationOf(getImport, { workspace: workspace.id, import: outcome.job.id }),
  );
});
