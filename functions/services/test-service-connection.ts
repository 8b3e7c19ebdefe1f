import { testServiceConnection as operation } from '../../shared/api/operations/services.ts';
import { postgisGateway } from '../../shared/datasources/gateway.ts';
import { secretBox } from '../../shared/datasources/secret-box.ts';
import { requireService, testServiceConnection } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  return ok(await testServiceConnection(postgisGateway, secretBox(), service));
});
