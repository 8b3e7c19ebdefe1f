import { createService as operation } from '../../shared/api/operations/services.ts';
import { postgisGateway } from '../../shared/datasources/gateway.ts';
import { rasterRoots } from '../../shared/datasources/geotiff-readers.ts';
import { secretBox } from '../../shared/datasources/secret-box.ts';
import { requireReadableRoot } from '../../shared/domain/mosaics.ts';
import { createService, presentService } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { created } from '../../shared/http/responses.ts';
import { serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, body }) => {
  if (body.type === 'raster_mosaic') await requireReadableRoot(rasterRoots, body.connection.root_uri);
  const service = await createService(serviceRepository(), postgisGateway, secretBox(), workspace.id, body);
  return created(presentService(service), `/api/v1/workspaces/${workspace.id}/services/${service.id}`);
});
