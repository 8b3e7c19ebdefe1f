import { locationOf } from '#api/operation.ts';
import { getDeletionOperation } from '#api/operations/deletions.ts';
import { deleteWorkspace as operation } from '#api/operations/workspaces.ts';
import { requestWorkspaceDeletion } from '#domain/deletion-requests.ts';
import { presentDeletion } from '#domain/deletions.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { accepted, noContent } from '#http/responses.ts';
import { deletionRepository, importRepository, workspaceRepository } from '#wiring/repositories.ts';
import { workflowStarter } from '#wiring/workflows.ts';

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
