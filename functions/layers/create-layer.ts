import { locationOf } from '../../shared/api/operation.ts';
import { getLayer, createLayer as operation } from '../../shared/api/operations/layers.ts';
import { createLayer, presentLayer } from '../../shared/domain/layers.ts';
import { created } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeChangeHandler(operation, async ({ workspace, service, body }) => {
  const layer = await createLayer(
    { layers: layerRepository(), gateway: postgisGateway, secrets: secretBox() },
    { service, body },
  );
  return created(
    presentLayer(layer),
    locationOf(getLayer, { workspace: workspace.id, service: service.id, layer: layer.id }),
  );
});
