import { discoverLayers as operation } from '#api/operations/services.ts';
import { discoverLayers } from '#domain/services.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { makeChangeHandler } from '#wiring/handler.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ service }) =>
  ok({ layers: await discoverLayers({ gateway: postgisGateway, secrets: secretBox() }, { service }) }),
);
