import { getMosaicHarvestJob as operation } from '#api/operations/mosaics.ts';
import { presentHarvestJob, requireHarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';

export const handler = makeHandler(operation, async (request) =>
  ok(
    presentHarvestJob(
      await requireHarvestJob(
        { jobs: harvestJobRepository() },
        { service: request.service, job: request.params.job },
      ),
    ),
  ),
);
