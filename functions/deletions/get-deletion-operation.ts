import { getDeletionOperation as operation } from '#api/operations/deletions.ts';
import { mayManageWorkspace } from '#auth/workspace-access.ts';
import { getDeletionOperation, presentDeletion } from '#domain/deletions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { accessPorts } from '#wiring/access.ts';
import { deletionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params, principal }) => {
  const { operation: op, plan } = await getDeletionOperation(
    {
      deletions: deletionRepository(),
      mayManage: (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'getDeletionOperation'),
    },
    { id: params.id, principal },
  );
  return ok(presentDeletion(op, plan));
});
