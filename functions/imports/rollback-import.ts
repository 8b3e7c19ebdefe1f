import { locationOf } from '../../shared/api/operation.ts';
import { getImport, rollbackImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, requireImport, rollbackImport } from '../../shared/domain/imports.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository, importStarter } from '../../shared/wiring/imports.ts';
import { deletionRepository, serviceRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, principal }) => {
  const repo = importRepository();
  const job = await requireImport(repo, workspace.id, params.import);
  const next = await rollbackImport(
    {
      repo,
      starter: importStarter(),
      services: serviceRepository(),
      deletions: deletionRepository(),
      deletionStarter: workflowStarter(),
    },
    workspace,
    job,
    principal.id,
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: job.id }));
});
