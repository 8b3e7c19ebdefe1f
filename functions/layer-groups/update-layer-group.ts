import { updateLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { requireLayerGroup, updateLayerGroup } from '../../shared/domain/layer-groups.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const groups = layerGroupRepository();
  const current = await requireLayerGroup(groups, layerRepository(), workspace.id, params.group);
  return ok(await updateLayerGroup(groups, layerRepository(), current, body, ifMatch));
});
