import { getDeletionOperation as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { presentDeletion, requireVisibleDeletion } from '../../shared/domain/deletions.ts';
import { ok } from '../../shared/http/responses.ts';
import { accessPorts } from '../../shared/wiring/access.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params, principal }) => {
  const { operation: op, plan } = await requireVisibleDeletion(
    deletionRepository(),
    params.id,
    principal,
    (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'getDeletionOperation'),
  );
  return ok(presentDeletion(op, plan));
});
