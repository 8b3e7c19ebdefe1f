import { deleteLayer as operation } from '../../shared/api/operations/layers.ts';
import { deleteLayer, requireLayer } from '../../shared/domain/layers.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  const repo = layerRepository();
  await deleteLayer(repo, await requireLayer(repo, service, params.layer), ifMatch);
  return noContent();
});
