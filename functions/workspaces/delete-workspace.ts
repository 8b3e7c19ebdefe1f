import { deleteWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import {
  deleteWorkspaceRecursively,
  deletionLocation,
  presentDeletion,
} from '../../shared/domain/deletions.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import { checkVersion, deleteWorkspace } from '../../shared/domain/workspaces.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { usageKeys } from '../../shared/platform/usage-keys.ts';
import { deletionRepository, workspaceRepository } from '../../shared/store/repositories.ts';
import { workflowStarter } from '../../shared/workflows/starter.ts';

export const handler = makeHandler(operation, async ({ workspace, ifMatch, query, principal }) => {
  if (query.recurse) {
    if (workspace.status === 'active') checkVersion(workspace, ifMatch);
    const repo = deletionRepository();
    const op = await deleteWorkspaceRecursively(repo, workflowStarter(), workspace, principal.id);
    const found = await repo.find(op.id);
    return accepted(presentDeletion(found?.operation ?? op, found?.plan), deletionLocation(op.id));
  }
  // Without recurse a workspace being deleted is as gone as for every other route.
  if (workspace.status !== 'active') {
    throw new NotFoundError('workspace_not_found', `Workspace '${workspace.name}' does not exist.`);
  }
  await deleteWorkspace(workspaceRepository(), workspace, ifMatch, usageKeys());
  return noContent();
});
