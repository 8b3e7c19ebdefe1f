import { listBrowserSessions as operation } from '#api/operations/auth.ts';
import { presentBrowserSession } from '#api/present.ts';
import { listBrowserSessions } from '#domain/sessions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { sessionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await listBrowserSessions(
    { sessions: sessionRepository() },
    { limit: query.limit, cursor: query.cursor },
  );
  return ok({ sessions: page.items.map(presentBrowserSession), next_cursor: page.nextCursor });
});
