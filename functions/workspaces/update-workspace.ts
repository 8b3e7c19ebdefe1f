import { updateWorkspace as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { updateWorkspace } from '#domain/workspaces.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, ifMatch }) => {
  const updated = await updateWorkspace({ workspaces: workspaceRepository() }, { workspace, body, ifMatch });
  return ok(presentWorkspace(updated));
});
