import { getMosaicHarvestJob as operation } from '#api/operations/mosaics.ts';
import { presentHarvestJob, requireHarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';

export const handler = makeHandler(operation, async (request) =>
  ok(presentHarvestJob(await requireHarvestJob(harvestJobRepository(), request.service, request.params.job))),
);
