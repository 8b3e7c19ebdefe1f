import { getLayer as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer, requireLayer } from '../../shared/domain/layers.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, params }) => {
  return ok(presentLayer(await requireLayer(layerRepository(), service, params.layer)));
});
