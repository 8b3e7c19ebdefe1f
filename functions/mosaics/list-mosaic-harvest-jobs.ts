import { listMosaicHarvestJobs as operation } from '#api/operations/mosaics.ts';
import { listHarvestJobs, presentHarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';

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
