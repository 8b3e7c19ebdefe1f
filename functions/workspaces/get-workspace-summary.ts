import { getWorkspaceSummary as operation } from '#api/operations/workspaces.ts';
import { workspaceSummary } from '#domain/workspace-summary.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await workspaceSummary({ workspaces: workspaceRepository() }, { workspace })),
);
