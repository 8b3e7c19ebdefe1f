import { locationOf } from '#api/operation.ts';
import { getMosaicHarvestJob, createMosaicHarvestJob as operation } from '#api/operations/mosaics.ts';
import { createHarvestJob, presentHarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { harvestJobRepository, harvestStarter } from '#wiring/mosaic-harvest-jobs.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, service, body }) => {
  const job = await createHarvestJob(
    { jobs: harvestJobRepository(), starter: harvestStarter() },
    { service, body: body ?? {} },
  );
  return accepted(
    presentHarvestJob(job),
    locationOf(getMosaicHarvestJob, { workspace: workspace.id, service: service.id, job: job.id }),
  );
});
