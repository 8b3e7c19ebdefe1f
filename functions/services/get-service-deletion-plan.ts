import { getServiceDeletionPlan as operation } from '../../shared/api/operations/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) => {
  return ok(await deletionRepository().servicePlan(service));
});
