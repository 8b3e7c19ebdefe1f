import { locationOf } from '../../shared/api/operation.ts';
import { getWorkspace, createWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { createWorkspace } from '../../shared/domain/workspaces.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';
import { usageKeys } from '../../shared/wiring/usage-keys.ts';

export const handler = makeChangeHandler(operation, async ({ body }) => {
  const workspace = await createWorkspace(workspaceRepository(), body, new Date(), usageKeys());
  return created(presentWorkspace(workspace), locationOf(getWorkspace, { workspace: workspace.id }));
});
