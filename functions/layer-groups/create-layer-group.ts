import { locationOf } from '#api/operation.ts';
import { getLayerGroup, createLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { createLayerGroup } from '#domain/layer-groups.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { layerGroupRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const group = await createLayerGroup(
    { groups: layerGroupRepository() },
    { workspaceId: workspace.id, body },
  );
  return created(group, locationOf(getLayerGroup, { workspace: workspace.id, group: group.id }));
});
