import { getServiceDeletionPlan as operation } from '../../shared/api/operations/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { pathService } from '../../shared/wiring/path-service.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async (request) => {
  const service = await pathService(request);
  return ok(await deletionRepository().servicePlan(service));
});
