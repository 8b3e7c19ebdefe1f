import { listMosaicHarvestJobs as operation } from '../../shared/api/operations/mosaics.ts';
import { listHarvestJobs, presentHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';

export const handler = makeHandler(operation, async ({ service, query }) => {
  const page = await listHarvestJobs(
    { jobs: harvestJobRepository() },
    { service, limit: query.limit, cursor: query.cursor },
  );
  return ok({
    jobs: page.items.map(presentHarvestJob),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
