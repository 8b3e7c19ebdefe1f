import { listStyles as operation } from '#api/operations/styles.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await styleRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ styles: page.items, next_cursor: page.nextCursor });
});
