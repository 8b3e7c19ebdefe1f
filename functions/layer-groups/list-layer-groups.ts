import { listLayerGroups as operation } from '#api/operations/layer-groups.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { layerGroupRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await layerGroupRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ layer_groups: page.items, next_cursor: page.nextCursor });
});
