import { locationOf } from '../../shared/api/operation.ts';
import { getService, createService as operation } from '../../shared/api/operations/services.ts';
import { createService, presentService } from '../../shared/domain/services.ts';
import { created } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterRoots } from '../../shared/wiring/mosaic-roots.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const service = await createService(
    { services: serviceRepository(), gateway: postgisGateway, secrets: secretBox(), roots: rasterRoots },
    { workspaceId: workspace.id, body },
  );
  return created(
    presentService(service),
    locationOf(getService, { workspace: workspace.id, service: service.id }),
  );
});
