import { getMosaicGranule as operation } from '../../shared/api/operations/mosaics.ts';
import { presentGranule, requireGranule } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { pathService } from '../../shared/wiring/path-service.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async (request) => {
  const { params } = request;
  const service = await pathService(request);
  return ok(presentGranule(await requireGranule(mosaicRepository(), service, params.granule)));
});
