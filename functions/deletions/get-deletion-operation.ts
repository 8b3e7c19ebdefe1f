import { getDeletionOperation as operation } from '#api/operations/deletions.ts';
import { mayManageWorkspace } from '#auth/workspace-access.ts';
import { presentDeletion, requireVisibleDeletion } from '#domain/deletions.ts';
import { ok } from '#http/responses.ts';
import { accessPorts } from '#wiring/access.ts';
import { makeHandler } from '#wiring/handler.ts';
import { deletionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params, principal }) => {
  const { operation: op, plan } = await requireVisibleDeletion(
    deletionRepository(),
    params.id,
    principal,
    (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'getDeletionOperation'),
  );
  return ok(presentDeletion(op, plan));
});
