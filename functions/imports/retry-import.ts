import { locationOf } from '../../shared/api/operation.ts';
import { getImport, retryImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, retryImport } from '../../shared/domain/imports.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importLimits, importRepository, importStarter } from '../../shared/wiring/imports.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params }) => {
  const next = await retryImport(
    { repo: importRepository(), starter: importStarter(), limits: importLimits() },
    { workspaceId: workspace.id, import: params.import },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
