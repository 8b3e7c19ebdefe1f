import { getService as operation } from '../../shared/api/operations/services.ts';
import { presentService, requireService } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentService(await requireService(serviceRepository(), workspace.id, params.service))),
);
