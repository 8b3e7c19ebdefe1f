import { listDeletionOperations as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { deletionFilter, listVisibleDeletions } from '../../shared/domain/deletions.ts';
import { ok } from '../../shared/http/responses.ts';
import { accessPorts } from '../../shared/wiring/access.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query, principal }) =>
  ok(
    await listVisibleDeletions(
      deletionRepository(),
      await deletionFilter(principal, query, workspaceRepository()),
      query.limit,
      query.cursor,
      principal,
      (ws) => mayManageWorkspace(accessPorts(), principal, ws, 'listDeletionOperations'),
    ),
  ),
);
