import { getLayerGroup as operation } from '#api/operations/layer-groups.ts';
import { requireLayerGroup } from '#domain/layer-groups.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(await requireLayerGroup(layerGroupRepository(), layerRepository(), workspace.id, params.group)),
);
