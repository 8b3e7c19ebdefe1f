import { deleteMosaicGranule as operation } from '#api/operations/mosaics.ts';
import { removeGranule } from '#domain/mosaics.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  await removeGranule({ mosaics: mosaicRepository() }, { service, granule: params.granule, ifMatch });
  return noContent();
});
