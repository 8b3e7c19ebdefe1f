import { updateLayer as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer, requireLayer, updateLayer } from '../../shared/domain/layers.ts';
import { requireService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const repo = layerRepository();
  const service = await requireService(serviceRepository(), workspace.id, params.service);
  const current = await requireLayer(repo, service, params.layer);
  return ok(
    presentLayer(await updateLayer(repo, postgisGateway, secretBox(), service, current, body, ifMatch)),
  );
});
