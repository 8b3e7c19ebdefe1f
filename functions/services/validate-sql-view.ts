import { validateSQLView as operation } from '../../shared/api/operations/services.ts';
import { validateSqlView } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeChangeHandler(operation, async ({ service, body }) =>
  ok(await validateSqlView({ gateway: postgisGateway, secrets: secretBox() }, { service, sql: body.sql })),
);
