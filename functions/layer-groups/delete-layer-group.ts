import { deleteLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { deleteLayerGroup } from '#domain/layer-groups.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteLayerGroup(
    { groups: layerGroupRepository(), layers: layerRepository() },
    { workspaceId: workspace.id, group: params.group, ifMatch },
  );
  return noContent();
});
