import { getMosaic as operation } from '../../shared/api/operations/mosaics.ts';
import { presentMosaic, requireMosaic } from '../../shared/domain/mosaics.ts';
import { requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, knownService }) => {
  const mosaic = requireMosaic(
    await requireService(serviceRepository(), workspace.id, params.service, false, knownService),
  );
  return ok(presentMosaic(mosaic, await mosaicRepository().state(workspace.id, mosaic.id)));
});
