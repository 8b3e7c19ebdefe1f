import { locationOf } from '#api/operation.ts';
import { getLayer, createLayer as operation } from '#api/operations/layers.ts';
import { createLayer, presentLayer } from '#domain/layers.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { layerRepository } from '#wiring/repositories.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeIdempotentHandler(operation, async ({ workspace, service, body }) => {
  const layer = await createLayer(
    { layers: layerRepository(), gateway: postgisGateway, secrets: secretBox() },
    { service, body },
  );
  return created(
    presentLayer(layer),
    locationOf(getLayer, { workspace: workspace.id, service: service.id, layer: layer.id }),
  );
});
