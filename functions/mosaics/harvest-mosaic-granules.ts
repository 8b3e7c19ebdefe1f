import { harvestMosaicGranules as operation } from '../../shared/api/operations/mosaics.ts';
import { harvestGranules, presentGranule } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterSources } from '../../shared/wiring/rasters.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, body }) => {
  const result = await harvestGranules(mosaicRepository(), rasterSources, service, body ?? {});
  return ok({ ...result, added: result.added.map(presentGranule) });
});
