import { listWorkspaces as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { listWorkspaces } from '#domain/workspaces.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await listWorkspaces(
    { workspaces: workspaceRepository() },
    { limit: query.limit, cursor: query.cursor },
  );
  return ok({ workspaces: page.items.map(presentWorkspace), next_cursor: page.nextCursor });
});
