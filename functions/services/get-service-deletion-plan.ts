import { getServiceDeletionPlan as operation } from '#api/operations/services.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { deletionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) => {
  return ok(await deletionRepository().servicePlan(service));
});
