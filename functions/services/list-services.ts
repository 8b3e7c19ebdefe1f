import { listServices as operation } from '#api/operations/services.ts';
import { listServices, presentService } from '#domain/services.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { serviceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listServices(
    { services: serviceRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ services: page.items.map(presentService), next_cursor: page.nextCursor });
});
