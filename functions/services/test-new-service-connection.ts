import { testNewServiceConnection as operation } from '../../shared/api/operations/services.ts';
import { testNewServiceConnection } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { postgisGateway, preloadPostgis } from '../../shared/wiring/datasources.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

// Its requests reach PostGIS: the driver loads during init.
preloadPostgis();

export const handler = makeChangeHandler(operation, async ({ body }) =>
  ok(await testNewServiceConnection(postgisGateway, body.connection)),
);
