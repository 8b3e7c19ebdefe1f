import { createWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { createWorkspace } from '../../shared/domain/workspaces.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { created } from '../../shared/http/responses.ts';
import { usageKeys } from '../../shared/platform/usage-keys.ts';
import { workspaceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ body }) => {
  const workspace = await createWorkspace(workspaceRepository(), body, new Date(), usageKeys());
  return created(presentWorkspace(workspace), `/api/v1/workspaces/${workspace.id}`);
});
