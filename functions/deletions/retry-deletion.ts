import { retryDeletion as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import {
  deletionLocation,
  presentDeletion,
  requireVisibleDeletion,
  retry,
} from '../../shared/domain/deletions.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { accepted } from '../../shared/http/responses.ts';
import { deletionRepository } from '../../shared/store/repositories.ts';
import { workflowStarter } from '../../shared/workflows/starter.ts';

export const handler = makeHandler(operation, async ({ params, principal }) => {
  const repo = deletionRepository();
  const { operation: op, plan } = await requireVisibleDeletion(repo, params.id, principal, (ws) =>
    mayManageWorkspace(principal, ws, 'retryDeletion'),
  );
  const next = await retry(repo, workflowStarter(), op);
  return accepted(presentDeletion(next, plan), deletionLocation(next.id));
});
