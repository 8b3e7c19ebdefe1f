import { validateSQLView as operation } from '../../shared/api/operations/services.ts';
import { postgisGateway } from '../../shared/datasources/gateway.ts';
import { secretBox } from '../../shared/datasources/secret-box.ts';
import { sqlValidationBody } from '../../shared/domain/datasource.ts';
import { liveConnection, requireService } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, body }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  const connection = await liveConnection(secretBox(), service);
  return ok(sqlValidationBody(await postgisGateway.describeSql(connection, body.sql)));
});
