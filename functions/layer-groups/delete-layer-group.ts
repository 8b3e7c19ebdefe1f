import { deleteLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { deleteLayerGroup } from '#domain/layer-groups.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { layerGroupRepository, layerRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteLayerGroup(
    { groups: layerGroupRepository(), layers: layerRepository() },
    { workspaceId: workspace.id, group: params.group, ifMatch },
  );
  return noContent();
});
