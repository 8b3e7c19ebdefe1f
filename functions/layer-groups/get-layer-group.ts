import { getLayerGroup as operation } from '../../shared/api/operations/layer-groups.ts';
import { requireLayerGroup } from '../../shared/domain/layer-groups.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { layerGroupRepository, layerRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(await requireLayerGroup(layerGroupRepository(), layerRepository(), workspace.id, params.group)),
);
