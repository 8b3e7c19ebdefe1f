import type { QueryCommand, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { StoreClient } from '#store/client.ts';
import { mergedIndexPage } from '#store/merged-listing.ts';

type Item = Record<string, unknown>;

/**
 * GSI1 Queries as DynamoDB answers the ones the merge sends: `GSI1PK = :pk AND GSI1SK BETWEEN a
 * AND b`, ExclusiveStartKey, Limit counting evaluated items, and a filter that keeps items whose
 * `match` is not false (evaluated either way).
 */
function fakeIndex(items: Item[]): { client: StoreClient; queries: () => number } {
  let count = 0;
  const client = {
    send: async (command: QueryCommand) => {
      count++;
      const input = command.input as QueryCommandInput;
      const values = input.ExpressionAttributeValues ?? {};
      const [, lo, hi] = /BETWEEN (:\w+) AND (:\w+)/.exec(input.KeyConditionExpression ?? '') ?? [];
      const forward = input.ScanIndexForward !== false;
      let range = items
        .filter((i) => i.GSI1PK === values[':pk'])
        .filter((i) => (i.GSI1SK as string) >= (values[lo as string] as string))
        .filter((i) => (i.GSI1SK as string) <= (values[hi as string] as string))
        .sort((a, b) => ((a.GSI1SK as string) < (b.GSI1SK as string) ? -1 : 1));
      if (!forward) range.reverse();
      const start = input.ExclusiveStartKey?.GSI1SK;
      if (start !== undefined) range = range.slice(range.findIndex((i) => i.GSI1SK === start) + 1);
      const evaluated = range.slice(0, input.Limit ?? range.length);
      const last = evaluated[evaluated.length - 1];
      return {
        Items: evaluated.filter((i) => !input.FilterExpression || i.match !== false),
        ...(evaluated.length === input.Limit && last ? { LastEvaluatedKey: { ...last } } : {}),
      };
    },
  } as unknown as StoreClient;
  return { client, queries: () => count };
}

const partitions = ['S#0', 'S#1', 'S#2', 'OLD'];
const sk = (n: number) => `2026-03-01T00:00:${String(n).padStart(6, '0')}#${n}`;
const entry = (n: number, match = true): Item => ({
  GSI1PK: partitions[(n * 7) % partitions.length],
  GSI1SK: sk(n),
  n,
  match,
});
const listing = { partitions, range: { from: '0', to: '9' }, backwards: true };

async function walk(
  client: StoreClient,
  limit: number,
  options: Partial<typeof listing> & { maxRounds?: number; filter?: { expression: string } } = {},
  between?: () => void,
): Promise<number[]> {
  const seen: number[] = [];
  let after: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = await mergedIndexPage(client, 't', { ...listing, ...options }, limit, after);
    expect(result.items.length).toBeLessThanOrEqual(limit);
    seen.push(...result.items.map((i) => i.n as number));
    if (!result.next) return seen;
    after = result.next;
    between?.();
  }
  throw new Error('the listing did not end');
}

describe('mergedIndexPage (ADR 0113)', () => {
  it.each([1, 3, 10, 100])(
    'merges every partition newest first, each item once (limit %i)',
    async (limit) => {
      const items = Array.from({ length: 57 }, (_, n) => entry(n));
      const { client } = fakeIndex(items);
      const seen = await walk(client, limit);
      expect(seen).toEqual(Array.from({ length: 57 }, (_, n) => 56 - n));
    },
  );

  it('merges oldest first when asked', async () => {
    const { client } = fakeIndex(Array.from({ length: 20 }, (_, n) => entry(n)));
    expect(await walk(client, 4, { backwards: false })).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('answers short pages at a safe position when the rounds run out, and skips nothing', async () => {
    // One match in ten: with one round per page, pages come back short (often empty) with a cursor.
    const items = Array.from({ length: 200 }, (_, n) => entry(n, n % 10 === 3));
    const { client } = fakeIndex(items);
    const seen = await walk(client, 5, { maxRounds: 1, filter: { expression: 'match' } });
    expect(seen).toEqual(
      items
        .filter((i) => i.match)
        .map((i) => i.n as number)
        .reverse(),
    );
  });

  it('never repeats or reorders what it lists while items are written between pages', async () => {
    const items = Array.from({ length: 80 }, (_, n) => entry(n * 10));
    const { client } = fakeIndex(items);
    let next = 1;
    const seen = await walk(client, 7, {}, () => {
      // Newer than everything, and in the middle of what is left (a clock that lags).
      items.push(entry(100_000 + next), entry(400 + next));
      next++;
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    for (let n = 0; n < 80; n++) expect(seen).toContain(n * 10);
    expect(seen.some((n) => n > 100_000)).toBe(false);
  });

  it('starts a position it has not reached from the top and ends one it has passed', async () => {
    const { client, queries } = fakeIndex(Array.from({ length: 10 }, (_, n) => entry(n)));
    const window = { ...listing, range: { from: sk(2), to: sk(5) } };
    const top = await mergedIndexPage(client, 't', window, 10, sk(9));
    expect(top.items.map((i) => i.n)).toEqual([5, 4, 3, 2]);
    const before = queries();
    expect(await mergedIndexPage(client, 't', window, 10, sk(1))).toEqual({ items: [] });
    expect(queries()).toBe(before);
  });
});
