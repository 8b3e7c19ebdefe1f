import { getLayer as operation } from '#api/operations/layers.ts';
import { getLayer, presentLayer } from '#domain/layers.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, params }) => {
  return ok(presentLayer(await getLayer({ layers: layerRepository() }, { service, layer: params.layer })));
});
