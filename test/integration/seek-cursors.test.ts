import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHostStore } from '../support/store.ts';

// Listings page by key condition (ADR 0097): store-level paging against the run's DynamoDB Local,
// each test in partitions of its own.
type Items = typeof import('#store/items.ts');
type Paging = typeof import('#store/paging.ts');
type Client = import('#store/client.ts').StoreClient;
type Item = Record<string, unknown>;

let items: Items;
let paging: Paging;
let db: Client;
let table: string;

beforeAll(async () => {
  useHostStore();
  items = await import('#store/items.ts');
  paging = await import('#store/paging.ts');
  const client = await import('#store/client.ts');
  db = client.documentClient();
  table = client.tableName();
});

const pad = (i: number) => String(i).padStart(4, '0');

async function put(...list: Item[]): Promise<void> {
  for (let i = 0; i < list.length; i += 25) {
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [table]: list.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  }
}

/** A client that records every Query it sends (and sends it). */
function recording(): { client: Client; queries: Record<string, unknown>[] } {
  const queries: Record<string, unknown>[] = [];
  const client: Client = {
    send: ((command: { input: Record<string, unknown> }) => {
      if (command instanceof QueryCommand) queries.push(command.input);
      return db.send(command as never);
    }) as Client['send'],
  };
  return { client, queries };
}

/** Every page of a listing from the start: the sort keys in the order returned. */
async function walk(
  page: (cursor?: string) => Promise<{ items: Item[]; nextCursor?: string }>,
  key: string,
  between?: (n: number) => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 200; n++) {
    const result = await page(cursor);
    seen.push(...result.items.map((i) => i[key] as string));
    cursor = result.nextCursor;
    if (!cursor) return seen;
    await between?.(n);
  }
  throw new Error('the listing did not end');
}

describe('seek cursors', () => {
  it('pages a prefix exactly while items are inserted and deleted between pages', async () => {
    // Prepare: 40 items with the prefix, and neighbours outside it on both sides, including the
    // one string the key condition's upper end admits (`ITEM$`).
    const partition = `SEEKTEST#${randomUUID()}`;
    const item = (i: number) => ({ PK: partition, SK: `ITEM#${pad(i)}`, n: i });
    await put(
      ...Array.from({ length: 40 }, (_, i) => item(i * 2)),
      { PK: partition, SK: 'ITEL#9999' },
      { PK: partition, SK: 'ITEM$' },
      { PK: partition, SK: 'ITEMS#0001' },
    );
    const expected = new Set(Array.from({ length: 40 }, (_, i) => `ITEM#${pad(i * 2)}`));
    const { client, queries } = recording();
    let last = '';

    // Act: between pages, delete the cursor's own item and one ahead, insert one ahead and one behind.
    const seen = await walk(
      async (cursor) => {
        const page = await items.queryPrefixPage(client, table, partition, 'ITEM#', 6, cursor);
        last = (page.items.at(-1)?.SK as string) ?? last;
        return page;
      },
      'SK',
      async (n) => {
        const at = Number(last.slice('ITEM#'.length));
        await db.send(new DeleteCommand({ TableName: table, Key: { PK: partition, SK: last } }));
        await db.send(
          new DeleteCommand({ TableName: table, Key: { PK: partition, SK: `ITEM#${pad(at + 4)}` } }),
        );
        expected.delete(`ITEM#${pad(at + 4)}`);
        await put(item(at + 1), item(Math.max(0, at - 3)));
        expected.add(`ITEM#${pad(at + 1)}`);
        if (n > 20) throw new Error('too many pages');
      },
    );

    // Assess: every item once, in order, nothing from outside the prefix; pages after the first by key condition.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
    expect(seen.every((sk) => sk.startsWith('ITEM#'))).toBe(true);
    expect(new Set(seen)).toEqual(expected);
    const [first, ...later] = queries;
    expect(first?.KeyConditionExpression).toContain('begins_with');
    expect(later.length).toBeGreaterThan(3);
    for (const q of later) {
      expect(q.KeyConditionExpression).toBe('PK = :pk AND SK BETWEEN :low AND :high');
      expect(q.ExpressionAttributeValues).toMatchObject({ ':high': 'ITEM#\u{10FFFF}' });
      expect((q.ExclusiveStartKey as Item).SK).toBe((q.ExpressionAttributeValues as Item)[':low']);
    }
  });

  it('pages a closed range newest first (backwards) and never leaves it', async () => {
    // Prepare: sort keys `<time>#<n>`, the window is the middle of them (like the audit trail).
    const partition = `SEEKTEST#${randomUUID()}`;
    const sk = (i: number) => `2026-01-01T00:${pad(i)}#${i}`;
    await put(...Array.from({ length: 60 }, (_, i) => ({ PK: partition, SK: sk(i) })));
    const range = { from: sk(10), to: sk(49) };
    const { client, queries } = recording();

    // Act
    const seen = await walk(
      (cursor) =>
        items.listingPage(client, table, { partition, range, backwards: true }, 7, cursor, {
          PK: { equals: partition },
          SK: true,
        }),
      'SK',
    );

    // Assess
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => sk(49 - i)));
    for (const q of queries.slice(1)) {
      expect(q.ScanIndexForward).toBe(false);
      expect((q.ExpressionAttributeValues as Item)[':low']).toBe(range.from);
      expect((q.ExclusiveStartKey as Item).SK).toBe((q.ExpressionAttributeValues as Item)[':high']);
    }
  });

  it('a backwards cursor from a wider window starts a narrower one at its newest item, and one past it ends it', async () => {
    const partition = `SEEKTEST#${randomUUID()}`;
    const sk = (i: number) => `2026-01-01T00:${pad(i)}#${i}`;
    await put(...Array.from({ length: 20 }, (_, i) => ({ PK: partition, SK: sk(i) })));
    const shape = { PK: { equals: partition }, SK: true } as const;
    const seek = { partition, range: { from: sk(5), to: sk(9) }, backwards: true };
    const newer = paging.encodeCursor({ PK: partition, SK: sk(15) });
    const older = paging.encodeCursor({ PK: partition, SK: sk(2) });

    const fromNewer = await items.listingPage(db, table, seek, 10, newer, shape);
    const fromOlder = await items.listingPage(db, table, seek, 10, older, shape);

    expect(fromNewer.items.map((i) => i.SK)).toEqual([9, 8, 7, 6, 5].map(sk));
    expect(fromOlder).toEqual({ items: [] });
  });

  it('pages a filtered listing exactly when the filter leaves pages short', async () => {
    // Prepare: one item in five matches the filter.
    const partition = `SEEKTEST#${randomUUID()}`;
    await put(
      ...Array.from({ length: 100 }, (_, i) => ({
        PK: partition,
        SK: `JOB#${pad(i)}`,
        kind: i % 5 === 3 ? 'wanted' : 'other',
      })),
    );
    const filter = { expression: '#k = :k', names: { '#k': 'kind' }, values: { ':k': 'wanted' } };
    let short = 0;

    // Act: limit 4, two fill rounds of at most 4 evaluated items each, so most pages are short.
    const seen = await walk(async (cursor) => {
      const page = await items.queryPrefixPage(db, table, partition, 'JOB#', 4, cursor, {
        filter,
        fillRounds: 2,
      });
      if (page.nextCursor && page.items.length < 4) short++;
      return page;
    }, 'SK');

    // Assess
    expect(short).toBeGreaterThan(0);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => `JOB#${pad(i * 5 + 3)}`));
  });

  it.each([false, true])(
    'pages a GSI1 listing whose sort keys repeat exactly (backwards: %s)',
    async (backwards) => {
      // Prepare: three items per GSI1 sort key, so `>` alone would skip ties.
      const listing = `SEEKTEST#${randomUUID()}`;
      const partition = `SEEKTEST#${randomUUID()}`;
      await put(
        ...Array.from({ length: 45 }, (_, i) => ({
          PK: partition,
          SK: `ITEM#${pad(i)}`,
          GSI1PK: listing,
          GSI1SK: `name-${pad(Math.floor(i / 3))}`,
        })),
      );
      const { client, queries } = recording();

      // Act: pages of 4 cut through the groups of three.
      const seen = await walk(
        (cursor) =>
          items.queryIndexPage(
            client,
            table,
            listing,
            4,
            cursor,
            { pk: { equals: partition }, sk: { prefix: 'ITEM#' } },
            backwards ? { backwards } : {},
          ),
        'SK',
      );

      // Assess
      expect([...seen].sort()).toEqual(Array.from({ length: 45 }, (_, i) => `ITEM#${pad(i)}`));
      for (const q of queries.slice(1)) {
        expect(q.KeyConditionExpression).toBe(`GSI1PK = :pk AND GSI1SK ${backwards ? '<=' : '>='} :seek`);
        expect((q.ExclusiveStartKey as Item).GSI1SK).toBe((q.ExpressionAttributeValues as Item)[':seek']);
      }
    },
  );

  it('resumes a cursor issued before seeking (a LastEvaluatedKey) at the same item', async () => {
    const partition = `SEEKTEST#${randomUUID()}`;
    await put(...Array.from({ length: 30 }, (_, i) => ({ PK: partition, SK: `ITEM#${pad(i)}` })));
    const old = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
        ExpressionAttributeValues: { ':p': partition, ':s': 'ITEM#' },
        Limit: 12,
      }),
    );
    const cursor = paging.encodeCursor(old.LastEvaluatedKey);

    const page = await items.queryPrefixPage(db, table, partition, 'ITEM#', 5, cursor);

    expect(page.items.map((i) => i.SK)).toEqual([12, 13, 14, 15, 16].map((i) => `ITEM#${pad(i)}`));
  });

  it('refuses a forged cursor for another partition or listing with invalid_cursor, before any Query', async () => {
    const partition = `SEEKTEST#${randomUUID()}`;
    const other = `SEEKTEST#${randomUUID()}`;
    await put({ PK: other, SK: 'ITEM#0001', GSI1PK: other, GSI1SK: 'a' });
    const { client, queries } = recording();
    const forged = [
      paging.encodeCursor({ PK: other, SK: 'ITEM#0001' }),
      paging.encodeCursor({ PK: partition, SK: 'OTHER#0001' }),
      paging.encodeCursor({ PK: partition, SK: 'ITEM#0001', GSI1PK: other, GSI1SK: 'a' }),
    ];
    for (const cursor of forged) {
      await expect(items.queryPrefixPage(client, table, partition, 'ITEM#', 5, cursor)).rejects.toMatchObject(
        {
          reason: 'invalid_cursor',
        },
      );
    }
    const gsiCursor = paging.encodeCursor({ PK: other, SK: 'ITEM#0001', GSI1PK: other, GSI1SK: 'a' });
    await expect(
      items.queryIndexPage(client, table, partition, 5, gsiCursor, { pk: true, sk: { prefix: 'ITEM#' } }),
    ).rejects.toMatchObject({ reason: 'invalid_cursor' });
    expect(queries).toHaveLength(0);
  });
});

describe('seek cursors of a repository', () => {
  it('lists API keys created between pages without skips or repeats', async () => {
    useHostStore();
    const repos = await import('#wiring/repositories.ts');
    const wsDomain = await import('#domain/workspaces.ts');
    const keysDomain = await import('#domain/api-keys.ts');
    const workspaces = repos.workspaceRepository();
    const apiKeys = repos.apiKeyRepository();
    const ws = await wsDomain.createWorkspace(
      { workspaces: workspaces },
      { body: { name: `it-${randomUUID().slice(0, 13)}` } },
    );
    for (let i = 0; i < 9; i++)
      await keysDomain.createApiKey(
        { keys: apiKeys },
        { workspaceId: ws.id, body: { name: `k${i}`, role_id: 'viewer' } },
      );
    const before = (await apiKeys.list(ws.id, 100)).items.map((k) => k.id);

    const seen: string[] = [];
    let cursor: string | undefined;
    let added = 0;
    do {
      const page = await apiKeys.list(ws.id, 4, cursor);
      seen.push(...page.items.map((k) => k.id));
      cursor = page.nextCursor;
      if (cursor && added < 2) {
        await keysDomain.createApiKey(
          { keys: apiKeys },
          { workspaceId: ws.id, body: { name: `late${added++}`, role_id: 'viewer' } },
        );
      }
    } while (cursor);

    const after = (await apiKeys.list(ws.id, 100)).items.map((k) => k.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
    // Every key that existed throughout was listed; keys created meanwhile appear at most once.
    for (const id of before) expect(seen).toContain(id);
    for (const id of seen) expect(after).toContain(id);
  });
});
