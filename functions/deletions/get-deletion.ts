import { getDeletion as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { presentDeletion, requireVisibleDeletion } from '../../shared/domain/deletions.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { deletionRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ params, principal }) => {
  const { operation: op, plan } = await requireVisibleDeletion(
    deletionRepository(),
    params.id,
    principal,
    (ws) => mayManageWorkspace(principal, ws, 'getDeletion'),
  );
  return ok(presentDeletion(op, plan));
});
