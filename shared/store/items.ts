import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { documentClient, type StoreClient, tableName } from './client.ts';
import { storeCall } from './errors.ts';
import type { Key } from './keys.ts';
import { type CursorShape, decodeCursor, encodeCursor } from './paging.ts';
import { attributes, gsi1, keyAttributes } from './table.ts';

type Item = Record<string, unknown>;

/** An expression with its placeholders (a filter, a projection). */
export interface Expression {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** Which items of a partition a query reads: all, the sort keys with a prefix, or a closed range. */
export type SortKeyRange = { prefix: string } | { from: string; to: string };

/** The key condition of a partition (with an optional sort key range), attribute names from table.ts. */
export function keyCondition(
  partition: string,
  range?: SortKeyRange,
): Pick<QueryCommandInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'> {
  const { pk, sk } = attributes;
  if (range && 'from' in range) {
    return {
      KeyConditionExpression: `${pk} = :pk AND ${sk} BETWEEN :from AND :to`,
      ExpressionAttributeValues: { ':pk': partition, ':from': range.from, ':to': range.to },
    };
  }
  // An empty prefix is the whole partition (`begins_with` refuses an empty string).
  if (range?.prefix) {
    return {
      KeyConditionExpression: `${pk} = :pk AND begins_with(${sk}, :prefix)`,
      ExpressionAttributeValues: { ':pk': partition, ':prefix': range.prefix },
    };
  }
  return { KeyConditionExpression: `${pk} = :pk`, ExpressionAttributeValues: { ':pk': partition } };
}

/** The key condition of a GSI1 listing partition. */
export function indexCondition(
  partition: string,
): Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues'> {
  return {
    IndexName: gsi1,
    KeyConditionExpression: `${attributes.gsi1pk} = :pk`,
    ExpressionAttributeValues: { ':pk': partition },
  };
}

/** What a query reads beside its key condition. */
export interface QueryOptions {
  filter?: Expression;
  projection?: Expression;
  consistent?: boolean;
  /** Newest first on GSI1 (`ScanIndexForward: false`). */
  backwards?: boolean;
  limit?: number;
}

/** A Query's input: the key condition, the filter and projection merged with their placeholders. */
export function queryInput(
  table: string,
  condition: Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues'>,
  options: QueryOptions = {},
): QueryCommandInput {
  const { filter, projection } = options;
  const names = { ...filter?.names, ...projection?.names };
  return {
    TableName: table,
    ...condition,
    ...(filter ? { FilterExpression: filter.expression } : {}),
    ...(projection ? { ProjectionExpression: projection.expression } : {}),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ...filter?.values },
    ...(options.consistent ? { ConsistentRead: true } : {}),
    ...(options.backwards ? { ScanIndexForward: false } : {}),
    ...(options.limit !== undefined ? { Limit: options.limit } : {}),
  };
}

/**
 * The paging loop: runs a Query page by page from `start`; `visit` sees each page and returns
 * false to stop. At most `maxPages` pages; `limit` (when given) sets each page's Limit. Returns
 * the key to go on from (undefined when the query is exhausted).
 */
export async function queryPages(
  db: StoreClient,
  input: QueryCommandInput,
  visit: (items: Item[]) => boolean | undefined | Promise<boolean | undefined>,
  paging: { start?: Item; maxPages?: number; limit?: () => number } = {},
): Promise<Item | undefined> {
  let start = paging.start;
  for (let page = 0; page < (paging.maxPages ?? Number.POSITIVE_INFINITY); page++) {
    const out = await storeCall(() =>
      db.send(
        new QueryCommand({
          ...input,
          ...(paging.limit ? { Limit: paging.limit() } : {}),
          ExclusiveStartKey: start,
        }),
      ),
    );
    start = out.LastEvaluatedKey;
    if ((await visit(out.Items ?? [])) === false || !start) break;
  }
  return start;
}

/** One page of a Query (from `start`): its items. */
export async function queryPage(db: StoreClient, input: QueryCommandInput, start?: Item): Promise<Item[]> {
  let items: Item[] = [];
  await queryPages(
    db,
    input,
    (page) => {
      items = page;
      return false;
    },
    start ? { start } : {},
  );
  return items;
}

/** One strongly consistent GetItem; store failures become domain errors (503). */
export async function getItem(db: StoreClient, table: string, key: Key): Promise<Item | undefined> {
  const out = await storeCall(() =>
    db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true })),
  );
  return out.Item;
}

/**
 * One page of an API listing: the query from the cursor (which must have `shape`), with a filter
 * that may leave pages short read on up to `fillRounds` times to fill the page.
 */
export async function listingPage(
  db: StoreClient,
  input: QueryCommandInput,
  limit: number,
  cursor: string | undefined,
  shape: CursorShape,
  fillRounds = 1,
): Promise<{ items: Item[]; nextCursor?: string }> {
  const items: Item[] = [];
  const next = await queryPages(
    db,
    input,
    (page) => {
      items.push(...page);
      return items.length < limit;
    },
    { start: decodeCursor(cursor, shape), maxPages: fillRounds, limit: () => limit - items.length },
  );
  return { items, nextCursor: encodeCursor(next) };
}

/**
 * One page of the items of a partition whose sort keys start with `prefix` — the shape of every
 * "children of X" listing. The cursor is pinned to that partition and prefix.
 */
export function queryPrefixPage(
  db: StoreClient,
  table: string,
  partition: string,
  prefix: string,
  limit: number,
  cursor: string | undefined,
  options: Omit<QueryOptions, 'limit' | 'backwards'> = {},
): Promise<{ items: Item[]; nextCursor?: string }> {
  return listingPage(db, queryInput(table, keyCondition(partition, { prefix }), options), limit, cursor, {
    [attributes.pk]: { equals: partition },
    [attributes.sk]: { prefix },
  });
}

/**
 * One page of a GSI1 listing (`partition`); `itemKey` is what the listed items' own keys look like
 * (cursor check). With a filter, `fillRounds` reads on to fill a short page.
 */
export function queryIndexPage(
  db: StoreClient,
  table: string,
  partition: string,
  limit: number,
  cursor: string | undefined,
  itemKey: { pk: CursorShape[string]; sk: CursorShape[string] },
  options: Omit<QueryOptions, 'limit' | 'consistent'> & { fillRounds?: number } = {},
): Promise<{ items: Item[]; nextCursor?: string }> {
  return listingPage(
    db,
    queryInput(table, indexCondition(partition), options),
    limit,
    cursor,
    {
      [attributes.pk]: itemKey.pk,
      [attributes.sk]: itemKey.sk,
      [attributes.gsi1pk]: { equals: partition },
      [attributes.gsi1sk]: true,
    },
    options.fillRounds,
  );
}

/** Consumed write units reported by DynamoDB (0 when it reports none). */
export function writeUnits(out: {
  ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[];
}): number {
  const list = Array.isArray(out.ConsumedCapacity)
    ? out.ConsumedCapacity
    : out.ConsumedCapacity
      ? [out.ConsumedCapacity]
      : [];
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}

/**
 * Every item of a partition whose sort key starts with `prefix` (strongly consistent), page by
 * page; `visit` sees each page. For plans and workflows, never for API listings (those page).
 */
export async function forEachPrefixPage(
  db: StoreClient,
  table: string,
  partition: string,
  prefix: string,
  visit: (items: Item[]) => void | Promise<void>,
  projection?: Expression,
): Promise<void> {
  await queryPages(
    db,
    queryInput(table, keyCondition(partition, { prefix }), {
      ...(projection ? { projection } : {}),
      consistent: true,
    }),
    async (items) => {
      await visit(items);
      return true;
    },
  );
}

/** Items by key, 100 per BatchGetItem, unprocessed keys retried with backoff. Missing keys are absent. */
export async function batchGetItems(
  db: StoreClient,
  table: string,
  itemKeys: Key[],
  projection?: Expression,
  consistent = true,
): Promise<Item[]> {
  const found: Item[] = [];
  for (let i = 0; i < itemKeys.length; i += 100) {
    let request: Key[] = itemKeys.slice(i, i + 100);
    for (let attempt = 0; request.length > 0; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const out = await storeCall(() =>
        db.send(
          new BatchGetCommand({
            RequestItems: {
              [table]: {
                Keys: request,
                ...(consistent ? { ConsistentRead: true } : {}),
                ...(projection
                  ? {
                      ProjectionExpression: projection.expression,
                      ExpressionAttributeNames: projection.names,
                    }
                  : {}),
              },
            },
          }),
        ),
      );
      found.push(...(out.Responses?.[table] ?? []));
      request = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Key[];
    }
  }
  return found;
}

/**
 * Deletes items by key, 25 per BatchWriteItem, unprocessed ones retried with backoff (deleting a
 * missing item is a no-op, so a repeat is harmless). Returns the write units consumed.
 */
export async function batchDeleteKeys(db: StoreClient, table: string, itemKeys: Key[]): Promise<number> {
  const batches: Key[][] = [];
  for (let i = 0; i < itemKeys.length; i += 25) batches.push(itemKeys.slice(i, i + 25));
  let units = 0;
  let next = 0;
  // A few batches in flight at once: each is independent and idempotent.
  const worker = async () => {
    while (next < batches.length) {
      let request = (batches[next++] as Key[]).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; request.length > 0; attempt++) {
        if (attempt > 0) await backoff(attempt);
        const out = await storeCall(() =>
          db.send(
            new BatchWriteCommand({ RequestItems: { [table]: request }, ReturnConsumedCapacity: 'TOTAL' }),
          ),
        );
        units += writeUnits(out);
        request = (out.UnprocessedItems?.[table] ?? []) as typeof request;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_WRITERS, batches.length) }, worker));
  return units;
}

/** An item without its key attributes and entity tag (and the `extra` attributes named). */
export function withoutKeys(item: Item, ...extra: string[]): Item {
  const rest: Item = {};
  for (const [name, value] of Object.entries(item)) {
    if (!keyAttributes.includes(name) && name !== 'entity' && !extra.includes(name)) rest[name] = value;
  }
  return rest;
}

/** BatchWriteItem requests in flight at once per deletion. */
const BATCH_WRITERS = 4;

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * What every repository starts from: the shared document client and the table. Its calls go
 * through `storeCall` (items.ts helpers, `transact`), where persistence errors are translated.
 */
export abstract class DynamoRepository {
  protected readonly db: StoreClient = documentClient();
  protected readonly table = tableName();

  /** One strongly consistent GetItem. */
  protected get(key: Key): Promise<Item | undefined> {
    return getItem(this.db, this.table, key);
  }
}
