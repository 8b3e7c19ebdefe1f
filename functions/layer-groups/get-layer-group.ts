import { getLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { getLayerGroup } from '#domain/layer-groups.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerGroupRepository, layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(
    await getLayerGroup(
      { groups: layerGroupRepository(), layers: layerRepository() },
      { workspaceId: workspace.id, group: params.group },
    ),
  ),
);
