import { getMosaicGranule as operation } from '../../shared/api/operations/mosaics.ts';
import { presentGranule, requireGranule } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, params }) => {
  return ok(presentGranule(await requireGranule(mosaicRepository(), service, params.granule)));
});
