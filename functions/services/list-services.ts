import { listServices as operation } from '#api/operations/services.ts';
import { presentService } from '#domain/services.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { serviceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await serviceRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ services: page.items.map(presentService), next_cursor: page.nextCursor });
});
