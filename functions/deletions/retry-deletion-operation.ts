import { locationOf } from '../../shared/api/operation.ts';
import {
  getDeletionOperation,
  retryDeletionOperation as operation,
} from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { presentDeletion, retryDeletionOperation } from '../../shared/domain/deletions.ts';
import { accepted } from '../../shared/http/responses.ts';
import { accessPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ params, principal }) => {
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
