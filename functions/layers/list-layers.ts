import { listLayers as operation } from '#api/operations/layers.ts';
import { presentLayer } from '#domain/layers.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { layerRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, service, query }) => {
  const page = await layerRepository().list(workspace.id, service.id, query.limit, query.cursor);
  return ok({ layers: page.items.map(presentLayer), next_cursor: page.nextCursor });
});
