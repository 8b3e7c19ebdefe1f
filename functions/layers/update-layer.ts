import { updateLayer as operation } from '#api/operations/layers.ts';
import { presentLayer, updateLayer } from '#domain/layers.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '#wiring/datasources.ts';
import { layerRepository } from '#wiring/repositories.ts';

// Its requests reach PostGIS and parse SQL: the driver and the parser load during init.
preloadPostgis({ sql: true });

export const handler = makeChangeHandler(operation, async ({ service, params, body, ifMatch }) =>
  ok(
    presentLayer(
      await updateLayer(
        { layers: layerRepository(), gateway: postgisGateway, secrets: secretBox() },
        { service, layer: params.layer, body, ifMatch },
      ),
    ),
  ),
);
