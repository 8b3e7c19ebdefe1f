import { locationOf } from '#api/operation.ts';
import { getDeletionOperation, retryDeletionOperation as operation } from '#api/operations/deletions.ts';
import { mayManageWorkspace } from '#auth/workspace-access.ts';
import { presentDeletion, retryDeletionOperation } from '#domain/deletions.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { accessPorts } from '#wiring/access.ts';
import { deletionRepository } from '#wiring/repositories.ts';
import { workflowStarter } from '#wiring/workflows.ts';

export const handler = makeIdempotentHandler(operation, async ({ params, principal }) => {
  const { operation: next, plan } = await retryDeletionOperation(
    {
      deletions: deletionRepository(),
      starter: workflowStarter(),
      mayManage: (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'retryDeletionOperation'),
    },
    { id: params.id, principal },
  );
  return accepted(presentDeletion(next, plan), locationOf(getDeletionOperation, { id: next.id }));
});
