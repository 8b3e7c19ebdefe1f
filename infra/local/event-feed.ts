import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import type { CatalogEvent, CatalogEventBus } from '#domain/catalog-events.ts';

/*
 * The local host's stand-in for EventBridge (ADR 0094): the catalog events it reads from DynamoDB
 * Local's stream (change-stream.ts), kept in memory in stream order and served to super_admin as a
 * feed with a cursor, so a client (and the tests) can see exactly which events a change produced.
 */

/** Events kept; older ones fall off (a cursor behind them starts at the oldest kept). */
const KEPT = 20_000;

/** One event of the feed, as EventBridge would deliver it (`id` is the feed's own sequence). */
export interface FeedEvent {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: CatalogEvent['detail'];
}

/** The feed: an append-only sequence of events in stream order. */
export class LocalEventFeed implements CatalogEventBus {
  private readonly events: FeedEvent[] = [];
  /** The sequence number of `events[0]`. */
  private first = 0;

  async publish(events: CatalogEvent[]): Promise<void> {
    for (const event of events) {
      this.events.push({
        id: String(this.first + this.events.length),
        source: event.source,
        'detail-type': event.detailType,
        time: event.detail.at,
        detail: event.detail,
      });
    }
    const excess = this.events.length - KEPT;
    if (excess > 0) {
      this.events.splice(0, excess);
      this.first += excess;
    }
  }

  /** The events from sequence `from` on (at most `limit`), and where to go on from. */
  page(from: number, limit: number): { events: FeedEvent[]; next: number } {
    const start = Math.max(from, this.first) - this.first;
    const events = this.events.slice(start, start + limit);
    return { events, next: this.first + start + events.length };
  }
}

/** The one feed of this process. */
export const eventFeed = new LocalEventFeed();

const Cursor = z.string().check(z.regex(/^\d{1,15}$/));

/** `GET /api/v1/events`: local only, never deployed (EventBridge is the feed on AWS). */
export const listLocalEvents = defineOperation({
  operationId: 'listLocalEvents',
  method: 'GET',
  path: '/api/v1/events',
  // Loaded on first use, like every route's function (the host sets its environment first).
  handler: 'infra/local/event-feed-handler.ts',
  permission: 'global',
  summary: 'Local mode only: the catalog events, oldest first, from a cursor',
  tags: ['events'],
  request: {
    query: z.strictObject({
      limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1000)), 100),
      cursor: z.optional(Cursor),
    }),
  },
  responses: { 200: { description: 'the events and the cursor to go on from' } },
  data: [],
});
