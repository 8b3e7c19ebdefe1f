import { locationOf } from '../../shared/api/operation.ts';
import {
  getMosaicHarvestJob,
  createMosaicHarvestJob as operation,
} from '../../shared/api/operations/mosaics.ts';
import { createHarvestJob, presentHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository, harvestStarter } from '../../shared/wiring/mosaic-harvest-jobs.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, service, body }) => {
  const job = await createHarvestJob(
    { jobs: harvestJobRepository(), starter: harvestStarter() },
    service,
    body ?? {},
  );
  return accepted(
    presentHarvestJob(job),
    locationOf(getMosaicHarvestJob, { workspace: workspace.id, service: service.id, job: job.id }),
  );
});
