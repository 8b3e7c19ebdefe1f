import { listLayerGroups as operation } from '#api/operations/layer-groups.ts';
import { listLayerGroups } from '#domain/layer-groups.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerGroupRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listLayerGroups(
    { groups: layerGroupRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ layer_groups: page.items, next_cursor: page.nextCursor });
});
