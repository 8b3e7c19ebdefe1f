import { getServiceDeletionPlan as operation } from '#api/operations/services.ts';
import { serviceDeletionPlan } from '#domain/deletions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { deletionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) =>
  ok(await serviceDeletionPlan({ deletions: deletionRepository() }, { service })),
);
