import { listBrowserSessions as operation } from '../../shared/api/operations/auth.ts';
import { presentBrowserSession } from '../../shared/api/present.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { sessionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await sessionRepository().listListed(query.limit, query.cursor, new Date().toISOString());
  return ok({ sessions: page.items.map(presentBrowserSession), next_cursor: page.nextCursor });
});
