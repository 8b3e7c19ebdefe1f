import { listDeletionOperations as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { listDeletionOperations } from '../../shared/domain/deletions.ts';
import { ok } from '../../shared/http/responses.ts';
import { accessPorts } from '../../shared/wiring/access.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

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
