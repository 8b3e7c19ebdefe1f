import { validateSQLView as operation } from '../../shared/api/operations/services.ts';
import { sqlValidationBody } from '../../shared/domain/datasource.ts';
import { liveConnection, requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, secretBox, warmSqlParser } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

// Its requests parse SQL: the parser loads during init.
warmSqlParser();

export const handler = makeChangeHandler(operation, async ({ workspace, params, body }) => {
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  const connection = await liveConnection(secretBox(), service);
  return ok(sqlValidationBody(await postgisGateway.describeSql(connection, body.sql)));
});
