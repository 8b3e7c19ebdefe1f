import { testNewServiceConnection as operation } from '#api/operations/services.ts';
import { testNewServiceConnection } from '#domain/services.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis } from '#wiring/datasources.ts';
import { makeChangeHandler } from '#wiring/handler.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ body }) =>
  ok(await testNewServiceConnection(postgisGateway, body.connection)),
);
