import { locationOf } from '../../shared/api/operation.ts';
import { getLayerGroup, createLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { createLayerGroup } from '../../shared/domain/layer-groups.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerGroupRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const group = await createLayerGroup(layerGroupRepository(), workspace.id, body);
  return created(group, locationOf(getLayerGroup, { workspace: workspace.id, group: group.id }));
});
