import { listWorkspaces as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await workspaceRepository().list(query.limit, query.cursor);
  return ok({ workspaces: page.items.map(presentWorkspace), next_cursor: page.nextCursor });
});
