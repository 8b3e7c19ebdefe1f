import { listDeletionOperations as operation } from '#api/operations/deletions.ts';
import { mayManageWorkspace } from '#auth/workspace-access.ts';
import { listDeletionOperations } from '#domain/deletions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { accessPorts } from '#wiring/access.ts';
import { deletionRepository, workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query, principal }) =>
  ok(
    await listDeletionOperations(
      {
        deletions: deletionRepository(),
        workspaces: workspaceRepository(),
        mayManage: (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'listDeletionOperations'),
      },
      { principal, query },
    ),
  ),
);
