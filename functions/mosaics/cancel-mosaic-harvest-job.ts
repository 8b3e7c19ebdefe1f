import { locationOf } from '#api/operation.ts';
import { getMosaicHarvestJob, cancelMosaicHarvestJob as operation } from '#api/operations/mosaics.ts';
import { cancelHarvestJob, presentHarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, service, params, ifMatch }) => {
  const job = await cancelHarvestJob({ jobs: harvestJobRepository() }, { service, job: params.job, ifMatch });
  return accepted(
    presentHarvestJob(job),
    locationOf(getMosaicHarvestJob, { workspace: workspace.id, service: service.id, job: job.id }),
  );
});
