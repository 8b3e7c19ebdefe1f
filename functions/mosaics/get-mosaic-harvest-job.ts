import { getMosaicHarvestJob as operation } from '../../shared/api/operations/mosaics.ts';
import { presentHarvestJob, requireHarvestJob } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';

export const handler = makeHandler(operation, async (request) =>
  ok(presentHarvestJob(await requireHarvestJob(harvestJobRepository(), request.service, request.params.job))),
);
