import { deleteLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { deleteLayerGroup } from '../../shared/domain/layer-groups.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteLayerGroup(
    { groups: layerGroupRepository(), layers: layerRepository() },
    { workspaceId: workspace.id, group: params.group, ifMatch },
  );
  return noContent();
});
