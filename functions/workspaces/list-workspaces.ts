import { listWorkspaces as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await workspaceRepository().list(query.limit, query.cursor);
  return ok({ workspaces: page.items.map(presentWorkspace), next_cursor: page.nextCursor });
});
