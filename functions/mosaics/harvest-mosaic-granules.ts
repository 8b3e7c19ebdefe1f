import { harvestMosaicGranules as operation } from '../../shared/api/operations/mosaics.ts';
import { harvestGranules, presentGranule } from '../../shared/domain/mosaics.ts';
import { requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterSources } from '../../shared/wiring/rasters.ts';
import { mosaicRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  const result = await harvestGranules(mosaicRepository(), rasterSources, service, body ?? {});
  return ok({ ...result, added: result.added.map(presentGranule) });
});
