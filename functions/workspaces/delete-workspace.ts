import { locationOf } from '../../shared/api/operation.ts';
import { getDeletionOperation } from '../../shared/api/operations/deletions.ts';
import { deleteWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { requestWorkspaceDeletion } from '../../shared/domain/deletion-requests.ts';
import { presentDeletion } from '../../shared/domain/deletions.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';
import { deletionRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, ifMatch, query, principal }) => {
  const outcome = await requestWorkspaceDeletion(
    {
      deletions: deletionRepository(),
      starter: workflowStarter(),
      imports: importRepository(),
      workspaces: workspaceRepository(),
    },
    { workspace, recurse: query.recurse ?? false, principalId: principal.id, ifMatch },
  );
  if ('deleted' in outcome) return noContent();
  return accepted(
    presentDeletion(outcome.operation, outcome.plan),
    locationOf(getDeletionOperation, { id: outcome.operation.id }),
  );
});
