import { deleteLayer as operation } from '../../shared/api/operations/layers.ts';
import { deleteLayer } from '../../shared/domain/layers.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  await deleteLayer({ layers: layerRepository() }, { service, layer: params.layer, ifMatch });
  return noContent();
});
