import { listBrowserSessions as operation } from '#api/operations/auth.ts';
import { presentBrowserSession } from '#api/present.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { sessionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await sessionRepository().listListed(query.limit, query.cursor, new Date().toISOString());
  return ok({ sessions: page.items.map(presentBrowserSession), next_cursor: page.nextCursor });
});
