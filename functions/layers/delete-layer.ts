import { deleteLayer as operation } from '#api/operations/layers.ts';
import { deleteLayer } from '#domain/layers.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { layerRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  await deleteLayer({ layers: layerRepository() }, { service, layer: params.layer, ifMatch });
  return noContent();
});
