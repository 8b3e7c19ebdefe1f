import { validateSQLView as operation } from '../../shared/api/operations/services.ts';
import { sqlValidationBody } from '../../shared/domain/datasource.ts';
import { liveConnection } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeChangeHandler(operation, async ({ service, body }) => {
  const connection = await liveConnection(secretBox(), service);
  return ok(sqlValidationBody(await postgisGateway.describeSql(connection, body.sql)));
});
