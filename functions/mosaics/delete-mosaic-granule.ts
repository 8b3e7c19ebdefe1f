import { deleteMosaicGranule as operation } from '../../shared/api/operations/mosaics.ts';
import { removeGranule } from '../../shared/domain/mosaics.ts';
import { requireService } from '../../shared/domain/services.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  await removeGranule(mosaicRepository(), service, params.granule, new Date(), ifMatch);
  return noContent();
});
