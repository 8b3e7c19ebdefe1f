import { harvestMosaicGranules as operation } from '#api/operations/mosaics.ts';
import { harvestGranules, presentGranule } from '#domain/mosaics.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { rasterSources } from '#wiring/rasters.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, body }) => {
  const result = await harvestGranules(mosaicRepository(), rasterSources, service, body ?? {});
  return ok({ ...result, added: result.added.map(presentGranule) });
});
