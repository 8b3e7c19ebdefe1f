import { getMosaicGranule as operation } from '../../shared/api/operations/mosaics.ts';
import { presentGranule, requireGranule } from '../../shared/domain/mosaics.ts';
import { requireService } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { mosaicRepository, serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  return ok(presentGranule(await requireGranule(mosaicRepository(), service, params.granule)));
});
