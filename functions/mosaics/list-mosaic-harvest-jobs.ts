import { listMosaicHarvestJobs as operation } from '../../shared/api/operations/mosaics.ts';
import { presentHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { requireMosaic } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';

export const handler = makeHandler(operation, async (request) => {
  const mosaic = requireMosaic(request.service);
  const page = await harvestJobRepository().list(
    mosaic.workspace_id,
    mosaic.id,
    request.query.limit,
    request.query.cursor,
  );
  return ok({
    jobs: page.items.map(presentHarvestJob),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
