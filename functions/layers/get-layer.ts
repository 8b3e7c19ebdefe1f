import { getLayer as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer, requireLayer } from '../../shared/domain/layers.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { pathService } from '../../shared/wiring/path-service.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async (request) => {
  const { params } = request;
  const service = await pathService(request);
  return ok(presentLayer(await requireLayer(layerRepository(), service, params.layer)));
});
