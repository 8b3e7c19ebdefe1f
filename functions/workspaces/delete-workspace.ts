import { locationOf } from '../../shared/api/operation.ts';
import { getDeletionOperation } from '../../shared/api/operations/deletions.ts';
import { deleteWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { deleteWorkspaceRecursively, presentDeletion } from '../../shared/domain/deletions.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import { refuseWorkspaceWithImports } from '../../shared/domain/imports.ts';
import { checkVersion, deleteWorkspace } from '../../shared/domain/workspaces.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';
import { deletionRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, ifMatch, query, principal }) => {
  if (query.recurse) {
    if (workspace.status === 'active') {
      checkVersion(workspace, ifMatch);
      await refuseWorkspaceWithImports(importRepository(), workspace.id);
    }
    const { operation: op, plan } = await deleteWorkspaceRecursively(
      deletionRepository(),
      workflowStarter(),
      workspace,
      principal.id,
    );
    return accepted(presentDeletion(op, plan), locationOf(getDeletionOperation, { id: op.id }));
  }
  // Without recurse a workspace being deleted is as gone as for every other route.
  if (workspace.status !== 'active') {
    throw new NotFoundError('workspace_not_found', `Workspace '${workspace.name}' does not exist.`);
  }
  await deleteWorkspace(workspaceRepository(), workspace, ifMatch);
  return noContent();
});
