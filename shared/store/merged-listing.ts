/**
 * One listing read from several GSI1 partitions at once (ADR 0113): the shards of a write key,
 * merged by their sort key into one order. The position between pages is the sort key of the
 * last item returned, which means the same thing in every partition. A next page therefore needs
 * no per-shard state: each shard is read from that key on. Sort keys must be unique across the
 * partitions, which holds for `<ISO time>#<id>`.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { StoreClient } from './client.ts';
import { storeCall } from './errors.ts';
import { type Expression, queryInput, seekCondition } from './items.ts';
import { attributes } from './table.ts';

type Item = Record<string, unknown>;

/** What a merged listing reads: the partitions, a closed sort key window, and the direction. */
export interface MergedListing {
  partitions: readonly string[];
  range: { from: string; to: string };
  /** Newest first: highest sort key first. */
  backwards?: boolean;
  filter?: Expression;
  /**
   * How many rounds of Queries one page may send before answering short (a selective filter may
   * leave every shard's reads empty). Each round reads every partition that ran dry, in parallel.
   */
  maxRounds?: number;
}

/** One page: the items in listing order, and the sort key the next page starts after. */
export interface MergedPage {
  items: Item[];
  /** Absent when nothing can follow. */
  next?: string;
}

/** DynamoDB's order of strings (UTF-8 bytes), as in items.ts. */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

interface Shard {
  partition: string;
  buffer: Item[];
  /** The key DynamoDB evaluated last in this partition (absent before the first read). */
  lastKey?: Item;
  done: boolean;
  chunk: number;
}

const DEFAULT_ROUNDS = 8;

const sortKeyOf = (item: Item) => item[attributes.gsi1sk] as string;

/**
 * One page of a merged listing after `after` (the previous page's `next`; undefined for the first).
 * A position outside the window behaves as in ADR 0097: one the listing has not reached starts
 * it from its beginning, and one it has passed gives an empty last page.
 */
export async function mergedIndexPage(
  db: StoreClient,
  table: string,
  listing: MergedListing,
  limit: number,
  after?: string,
): Promise<MergedPage> {
  const backwards = listing.backwards ?? false;
  // `before(a, b)`: a comes earlier in the listing than b.
  const before = (a: string, b: string) => (backwards ? compareKeys(a, b) > 0 : compareKeys(a, b) < 0);
  let { from, to } = listing.range;
  if (after !== undefined) {
    const passed = backwards ? compareKeys(after, from) < 0 : compareKeys(after, to) > 0;
    if (passed) return { items: [] };
    // Inclusive: the item at `after` itself (in one partition at most) is dropped when read.
    if (backwards && compareKeys(after, to) <= 0) to = after;
    if (!backwards && compareKeys(after, from) >= 0) from = after;
  }
  const keep = (item: Item) => after === undefined || before(after, sortKeyOf(item));

  const shards: Shard[] = listing.partitions.map((partition) => ({
    partition,
    buffer: [],
    done: false,
    // Records spread evenly over the shards: half again a fair share of the page each (so one
    // round usually fills it), plus one for the item at `after`.
    chunk: Math.ceil((1.5 * limit) / listing.partitions.length) + 1,
  }));

  const read = async (shard: Shard) => {
    const seek = { index: true, partition: shard.partition, range: { from, to }, backwards };
    const next = seekCondition(seek, shard.lastKey);
    if (!next) {
      shard.done = true;
      return;
    }
    const input = queryInput(table, next.condition, {
      ...(listing.filter ? { filter: listing.filter } : {}),
      ...(backwards ? { backwards: true } : {}),
      limit: shard.chunk,
    });
    const out = await storeCall(() =>
      db.send(new QueryCommand({ ...input, ExclusiveStartKey: next.exclusiveStart })),
    );
    shard.buffer.push(...(out.Items ?? []).filter(keep));
    shard.lastKey = out.LastEvaluatedKey;
    shard.done = !out.LastEvaluatedKey;
    // A shard that runs dry within a page is read in larger steps (the old unsharded partition).
    shard.chunk = Math.min(shard.chunk * 2, limit + 1);
  };

  const items: Item[] = [];
  const maxRounds = listing.maxRounds ?? DEFAULT_ROUNDS;
  let rounds = 0;
  /** The next item in listing order, unless a partition that ran dry may still hold an earlier one. */
  const take = (bound?: string): Item | undefined => {
    let best: Shard | undefined;
    for (const shard of shards) {
      const head = shard.buffer[0];
      if (head && (!best || before(sortKeyOf(head), sortKeyOf(best.buffer[0] as Item)))) best = shard;
    }
    const head = best?.buffer[0];
    if (!best || !head || (bound !== undefined && !before(sortKeyOf(head), bound))) return undefined;
    return best.buffer.shift();
  };

  while (items.length < limit) {
    const dry = shards.filter((s) => s.buffer.length === 0 && !s.done);
    if (dry.length > 0) {
      if (rounds >= maxRounds) break;
      rounds++;
      await Promise.all(dry.map(read));
      continue;
    }
    const item = take();
    if (!item) return { items };
    items.push(item);
  }

  const dry = shards.filter((s) => s.buffer.length === 0 && !s.done);
  if (items.length < limit && dry.length > 0) {
    // Out of rounds: each dry partition has been evaluated up to its last evaluated key, so the
    // least advanced of those keys is a safe position (everything before it in every partition
    // was read). What is buffered before it goes out on this page; the rest is read again.
    const frontier = dry
      .map((s) => (s.lastKey as Item)[attributes.gsi1sk] as string)
      .reduce((a, b) => (before(a, b) ? a : b));
    for (let item = take(frontier); item && items.length < limit; item = take(frontier)) items.push(item);
    if (items.length < limit) return { items, next: frontier };
  }
  const more = shards.some((s) => s.buffer.length > 0 || !s.done);
  const last = items[items.length - 1];
  return more && last ? { items, next: sortKeyOf(last) } : { items };
}
