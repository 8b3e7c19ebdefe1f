import { locationOf } from '../../shared/api/operation.ts';
import {
  getDeletionOperation,
  retryDeletionOperation as operation,
} from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { presentDeletion, requireVisibleDeletion, retry } from '../../shared/domain/deletions.ts';
import { accepted } from '../../shared/http/responses.ts';
import { accessPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ params, principal }) => {
  const repo = deletionRepository();
  const { operation: op, plan } = await requireVisibleDeletion(repo, params.id, principal, (ws) =>
    mayManageWorkspace(accessPorts(), principal, ws, 'retryDeletionOperation'),
  );
  const next = await retry(repo, workflowStarter(), op);
  return accepted(presentDeletion(next, plan), locationOf(getDeletionOperation, { id: next.id }));
});
