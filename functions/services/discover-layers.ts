import { discoverLayers as operation } from '../../shared/api/operations/services.ts';
import { discoverLayers } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis, secretBox } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ service }) =>
  ok({ layers: await discoverLayers({ gateway: postgisGateway, secrets: secretBox() }, { service }) }),
);
