import { deleteMosaicGranule as operation } from '../../shared/api/operations/mosaics.ts';
import { removeGranule } from '../../shared/domain/mosaics.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ service, params, ifMatch }) => {
  await removeGranule(mosaicRepository(), service, params.granule, new Date(), ifMatch);
  return noContent();
});
