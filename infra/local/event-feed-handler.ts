import { InvalidInputError } from '#domain/errors.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { eventFeed, listLocalEvents } from './event-feed.ts';

/** `GET /api/v1/events` of the local host (ADR 0094): a page of the feed from the cursor. */
export const handler = makeHandler(listLocalEvents, async ({ query }) => {
  const from = query.cursor === undefined ? 0 : Number(query.cursor);
  if (!Number.isSafeInteger(from))
    throw new InvalidInputError('invalid_cursor', 'The cursor is not one this feed returned.');
  const { events, next } = eventFeed.page(from, query.limit);
  return ok({ events, next_cursor: String(next) });
});
