import { getLayer as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer, requireLayer } from '../../shared/domain/layers.ts';
import { requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, knownService }) => {
  const service = await requireService(
    serviceRepository(),
    workspace.id,
    params.service,
    false,
    knownService,
  );
  return ok(presentLayer(await requireLayer(layerRepository(), service, params.layer)));
});
