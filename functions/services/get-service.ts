import { getService as operation } from '../../shared/api/operations/services.ts';
import { presentService, requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, knownService }) =>
  ok(
    presentService(
      await requireService(serviceRepository(), workspace.id, params.service, false, knownService),
    ),
  ),
);
