import { deleteLayer as operation } from '../../shared/api/operations/layers.ts';
import { deleteLayer, requireLayer } from '../../shared/domain/layers.ts';
import { requireService } from '../../shared/domain/services.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const repo = layerRepository();
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  await deleteLayer(repo, await requireLayer(repo, service, params.layer), ifMatch);
  return noContent();
});
