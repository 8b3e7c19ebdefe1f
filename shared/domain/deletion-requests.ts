import type { StartedDeletion } from './deletion-model.ts';
import {
  type DeletionRepository,
  deleteService,
  deleteWorkspaceRecursively,
  type ServiceDeletionOutcome,
} from './deletions.ts';
import { NotFoundError } from './errors.ts';
import { type ImportRepository, refuseImportOwnedService, refuseWorkspaceWithImports } from './imports.ts';
import type { Service } from './services.ts';
import type { WorkflowStarter } from './workflows.ts';
import { checkVersion, deleteWorkspace, type Workspace, type WorkspaceRepository } from './workspaces.ts';

/**
 * The deletions a caller asks for (deleteService, deleteWorkspace): each refused while an import
 * holds data there (roll it back instead), then done at once when nothing depends on the target,
 * or hidden at once and handed to the deletion workflow with `recurse` (ADR 0068). Apart from
 * `deletions.ts`, which the imports' own rollback uses, so that module needs no import rules.
 */

/** The ports a deletion request takes: the deletion store and workflow, the imports, the workspaces. */
export interface DeletionRequestDeps {
  deletions: DeletionRepository;
  starter: WorkflowStarter;
  imports: ImportRepository;
}

/**
 * deleteService: a service an import published is refused (409 `service_owned_by_import`) while
 * it is active; then deleted at once (empty), or by the workflow with `recurse` (202), or 409
 * with the plan. A service being deleted answers with its operation.
 */
export async function requestServiceDeletion(
  { deletions, starter, imports }: DeletionRequestDeps,
  command: {
    workspace: Workspace;
    service: Service;
    recurse: boolean;
    principalId: string;
    ifMatch?: string;
    now?: Date;
  },
): Promise<ServiceDeletionOutcome> {
  const { workspace, service } = command;
  if (service.status === 'active') await refuseImportOwnedService(imports, workspace.id, service.id);
  return deleteService(
    { deletions, starter },
    {
      workspace,
      service,
      recurse: command.recurse,
      createdBy: command.principalId,
      now: command.now,
      ifMatch: command.ifMatch,
    },
  );
}

/**
 * deleteWorkspace: with `recurse`, a workspace whose imports hold data is refused (409
 * `workspace_has_imports`), else hidden and handed to the workflow (202; one being deleted answers
 * with its operation). Without it, an empty active workspace is deleted at once (204) and one being
 * deleted is as gone as for every other route (404).
 */
export async function requestWorkspaceDeletion(
  deps: DeletionRequestDeps & { workspaces: WorkspaceRepository },
  command: { workspace: Workspace; recurse: boolean; principalId: string; ifMatch?: string },
): Promise<{ deleted: true } | StartedDeletion> {
  const { workspace, ifMatch } = command;
  if (command.recurse) {
    if (workspace.status === 'active') {
      checkVersion(workspace, ifMatch);
      await refuseWorkspaceWithImports(deps.imports, workspace.id);
    }
    return deleteWorkspaceRecursively(deps, { workspace, createdBy: command.principalId });
  }
  if (workspace.status !== 'active') {
    throw new NotFoundError('workspace_not_found', `Workspace '${workspace.name}' does not exist.`);
  }
  await deleteWorkspace(deps.workspaces, workspace, ifMatch);
  return { deleted: true };
}
