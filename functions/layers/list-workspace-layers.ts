import { listWorkspaceLayers as operation } from '#api/operations/layers.ts';
import { listWorkspaceLayers, presentLayer } from '#domain/layers.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { layerRepository, serviceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listWorkspaceLayers(
    { layers: layerRepository(), services: serviceRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor, q: query.q },
  );
  return ok({
    layers: page.items.map((l) => ({ ...presentLayer(l), service_name: l.service_name })),
    next_cursor: page.nextCursor,
  });
});
