import { locationOf } from '../../shared/api/operation.ts';
import {
  getMosaicHarvestJob,
  cancelMosaicHarvestJob as operation,
} from '../../shared/api/operations/mosaics.ts';
import { cancelHarvestJob, presentHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, service, params, ifMatch }) => {
  const job = await cancelHarvestJob(harvestJobRepository(), service, params.job, ifMatch);
  return accepted(
    presentHarvestJob(job),
    locationOf(getMosaicHarvestJob, { workspace: workspace.id, service: service.id, job: job.id }),
  );
});
