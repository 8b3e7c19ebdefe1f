import { locationOf } from '../../shared/api/operation.ts';
import {
  getMosaicHarvestJob,
  cancelMosaicHarvestJob as operation,
} from '../../shared/api/operations/mosaics.ts';
import { cancelHarvestJob, presentHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { requireService } from '../../shared/domain/services.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  const job = await cancelHarvestJob(harvestJobRepository(), service, params.job, ifMatch);
  return accepted(
    presentHarvestJob(job),
    locationOf(getMosaicHarvestJob, { workspace: workspace.id, service: service.id, job: job.id }),
  );
});
