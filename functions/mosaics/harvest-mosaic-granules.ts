import { harvestMosaicGranules as operation } from '#api/operations/mosaics.ts';
import { harvestGranules, presentGranule } from '#domain/mosaics.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { rasterSources } from '#wiring/rasters.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ service, body }) => {
  const result = await harvestGranules(
    { mosaics: mosaicRepository(), sources: rasterSources },
    { service, body: body ?? {} },
  );
  return ok({ ...result, added: result.added.map(presentGranule) });
});
