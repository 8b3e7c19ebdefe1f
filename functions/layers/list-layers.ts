import { listLayers as operation } from '#api/operations/layers.ts';
import { listLayers, presentLayer } from '#domain/layers.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, query }) => {
  const page = await listLayers(
    { layers: layerRepository() },
    { service, limit: query.limit, cursor: query.cursor },
  );
  return ok({ layers: page.items.map(presentLayer), next_cursor: page.nextCursor });
});
