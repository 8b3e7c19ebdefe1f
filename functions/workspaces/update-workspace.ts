import { updateWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { updateWorkspace } from '../../shared/domain/workspaces.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, ifMatch }) => {
  const updated = await updateWorkspace(workspaceRepository(), workspace, body, ifMatch);
  return ok(presentWorkspace(updated));
});
