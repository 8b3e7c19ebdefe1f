import { locationOf } from '../../shared/api/operation.ts';
import { getImport, cancelImport as operation } from '../../shared/api/operations/imports.ts';
import { cancelImport, presentImport } from '../../shared/domain/imports.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository, importStarter, importUploads } from '../../shared/wiring/imports.ts';

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
