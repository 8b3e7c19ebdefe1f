import { testExistingServiceConnection as operation } from '#api/operations/services.ts';
import { testExistingServiceConnection } from '#domain/services.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { makeChangeHandler } from '#wiring/handler.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ service }) =>
  ok(await testExistingServiceConnection({ gateway: postgisGateway, secrets: secretBox() }, { service })),
);
