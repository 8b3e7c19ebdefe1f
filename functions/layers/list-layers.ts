import { listLayers as operation } from '../../shared/api/operations/layers.ts';
import { presentLayer } from '../../shared/domain/layers.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { layerRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, service, query }) => {
  const page = await layerRepository().list(workspace.id, service.id, query.limit, query.cursor);
  return ok({ layers: page.items.map(presentLayer), next_cursor: page.nextCursor });
});
