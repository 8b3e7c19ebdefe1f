import { listServices as operation } from '../../shared/api/operations/services.ts';
import { presentService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await serviceRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ services: page.items.map(presentService), next_cursor: page.nextCursor });
});
