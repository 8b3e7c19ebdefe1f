import { locationOf } from '../../shared/api/operation.ts';
import { getImport, rollbackImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, rollbackImport } from '../../shared/domain/imports.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository, importStarter } from '../../shared/wiring/imports.ts';
import { deletionRepository, serviceRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, principal }) => {
  const next = await rollbackImport(
    {
      repo: importRepository(),
      starter: importStarter(),
      services: serviceRepository(),
      deletions: deletionRepository(),
      deletionStarter: workflowStarter(),
    },
    { workspaceId: workspace.id, import: params.import, workspace, principalId: principal.id },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
