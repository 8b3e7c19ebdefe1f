import { locationOf } from '#api/operation.ts';
import { getService, createService as operation } from '#api/operations/services.ts';
import { createService, presentService } from '#domain/services.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { rasterRoots } from '#wiring/mosaic-roots.ts';
import { serviceRepository } from '#wiring/repositories.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const service = await createService(
    { services: serviceRepository(), gateway: postgisGateway, secrets: secretBox(), roots: rasterRoots },
    { workspaceId: workspace.id, body },
  );
  return created(
    presentService(service),
    locationOf(getService, { workspace: workspace.id, service: service.id }),
  );
});
