import { deleteMosaicGranule as operation } from '#api/operations/mosaics.ts';
import { removeGranule } from '#domain/mosaics.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  await removeGranule(mosaicRepository(), service, params.granule, new Date(), ifMatch);
  return noContent();
});
