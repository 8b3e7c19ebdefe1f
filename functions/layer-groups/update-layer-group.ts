import { updateLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { updateLayerGroup } from '#domain/layer-groups.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerGroupRepository, layerRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) =>
  ok(
    await updateLayerGroup(
      { groups: layerGroupRepository(), layers: layerRepository() },
      { workspaceId: workspace.id, group: params.group, body, ifMatch },
    ),
  ),
);
