import { getMosaic as operation } from '../../shared/api/operations/mosaics.ts';
import { presentMosaic, requireMosaic } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async (request) => {
  const { workspace } = request;
  const mosaic = requireMosaic(request.service);
  return ok(presentMosaic(mosaic, await mosaicRepository().state(workspace.id, mosaic.id)));
});
