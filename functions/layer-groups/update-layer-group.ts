import { updateLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { updateLayerGroup } from '../../shared/domain/layer-groups.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) =>
  ok(
    await updateLayerGroup(
      { groups: layerGroupRepository(), layers: layerRepository() },
      { workspaceId: workspace.id, group: params.group, body, ifMatch },
    ),
  ),
);
