import { updateService as operation } from '../../shared/api/operations/services.ts';
import { presentService, updateService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterRoots } from '../../shared/wiring/mosaic-roots.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

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
