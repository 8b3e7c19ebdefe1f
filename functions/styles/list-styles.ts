import { listStyles as operation } from '#api/operations/styles.ts';
import { listStyles } from '#domain/styles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listStyles(
    { styles: styleRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ styles: page.items, next_cursor: page.nextCursor });
});
