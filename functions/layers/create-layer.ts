import { createLayer as operation } from '../../shared/api/operations/layers.ts';
import { postgisGateway } from '../../shared/datasources/gateway.ts';
import { secretBox } from '../../shared/datasources/secret-box.ts';
import { createLayer, presentLayer } from '../../shared/domain/layers.ts';
import { requirePostgis, requireService } from '../../shared/domain/services.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { created } from '../../shared/http/responses.ts';
import { layerRepository, serviceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, body }) => {
  // Layers publish PostGIS tables; a raster mosaic is 422 even for an offline draft.
  const service = requirePostgis(await requireService(serviceRepository(), workspace.id, params.service));
  const layer = await createLayer(layerRepository(), postgisGateway, secretBox(), service, body);
  return created(
    presentLayer(layer),
    `/api/v1/workspaces/${workspace.id}/services/${service.id}/layers/${layer.id}`,
  );
});
