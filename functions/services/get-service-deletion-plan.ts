import { getServiceDeletionPlan as operation } from '../../shared/api/operations/services.ts';
import { requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, knownService }) => {
  const service = await requireService(
    serviceRepository(),
    workspace.id,
    params.service,
    false,
    knownService,
  );
  return ok(await deletionRepository().servicePlan(service));
});
