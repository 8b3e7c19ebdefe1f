import { testNewServiceConnection as operation } from '#api/operations/services.ts';
import { testNewServiceConnection } from '#domain/services.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis } from '#wiring/datasources.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeIdempotentHandler(operation, async ({ body }) =>
  ok(await testNewServiceConnection({ gateway: postgisGateway }, { connection: body.connection })),
);
