import { updateService as operation } from '../../shared/api/operations/services.ts';
import { requireReadableRoot } from '../../shared/domain/mosaics.ts';
import { presentService, updateService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterRoots } from '../../shared/wiring/mosaic-roots.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ service, body, ifMatch }) => {
  const repo = serviceRepository();
  if (body.type === 'raster_mosaic' && service.type === 'raster_mosaic') {
    await requireReadableRoot(rasterRoots, body.connection.root_uri);
  }
  return ok(presentService(await updateService(repo, postgisGateway, secretBox(), service, body, ifMatch)));
});
