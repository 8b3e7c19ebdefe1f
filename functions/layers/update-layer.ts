import { updateLayer as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer, updateLayer } from '../../shared/domain/layers.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

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
