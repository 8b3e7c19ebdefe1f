import { getLayer as operation } from '#api/operations/layers.ts';
import { presentLayer, requireLayer } from '#domain/layers.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, params }) => {
  return ok(presentLayer(await requireLayer(layerRepository(), service, params.layer)));
});
