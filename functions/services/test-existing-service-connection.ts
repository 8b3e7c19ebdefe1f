import { testExistingServiceConnection as operation } from '#api/operations/services.ts';
import { testExistingServiceConnection } from '#domain/services.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeIdempotentHandler(operation, async ({ service }) =>
  ok(await testExistingServiceConnection({ gateway: postgisGateway, secrets: secretBox() }, { service })),
);
