import { updateService as operation } from '../../shared/api/operations/services.ts';
import { requireReadableRoot } from '../../shared/domain/mosaics.ts';
import { presentService, requireService, updateService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { rasterRoots } from '../../shared/wiring/mosaic-roots.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const repo = serviceRepository();
  const current = await requireService(repo, workspace.id, params.service);
  if (body.type === 'raster_mosaic' && current.type === 'raster_mosaic') {
    await requireReadableRoot(rasterRoots, body.connection.root_uri);
  }
  return ok(presentService(await updateService(repo, postgisGateway, secretBox(), current, body, ifMatch)));
});
