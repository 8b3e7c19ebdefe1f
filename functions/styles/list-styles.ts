import { listStyles as operation } from '../../shared/api/operations/styles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await styleRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ styles: page.items, next_cursor: page.nextCursor });
});
