import { updateService as operation } from '#api/operations/services.ts';
import { presentService, updateService } from '#domain/services.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { rasterRoots } from '#wiring/mosaic-roots.ts';
import { serviceRepository } from '#wiring/repositories.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ service, body, ifMatch }) =>
  ok(
    presentService(
      await updateService(
        { services: serviceRepository(), gateway: postgisGateway, secrets: secretBox(), roots: rasterRoots },
        { service, body, ifMatch },
      ),
    ),
  ),
);
