import { locationOf } from '#api/operation.ts';
import { getWorkspace, createWorkspace as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { createWorkspace } from '#domain/workspaces.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { workspaceRepository } from '#wiring/repositories.ts';
import { usageKeys } from '#wiring/usage-keys.ts';

export const handler = makeIdempotentHandler(operation, async ({ body }) => {
  const workspace = await createWorkspace(
    { workspaces: workspaceRepository(), usageKeys: usageKeys() },
    { body, now: new Date() },
  );
  return created(presentWorkspace(workspace), locationOf(getWorkspace, { workspace: workspace.id }));
});
