import { getLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { requireLayerGroup } from '../../shared/domain/layer-groups.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { layerGroupRepository, layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(await requireLayerGroup(layerGroupRepository(), layerRepository(), workspace.id, params.group)),
);
