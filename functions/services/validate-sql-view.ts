import { validateSQLView as operation } from '#api/operations/services.ts';
import { validateSqlView } from '#domain/services.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeIdempotentHandler(operation, async ({ service, body }) =>
  ok(await validateSqlView({ gateway: postgisGateway, secrets: secretBox() }, { service, sql: body.sql })),
);
