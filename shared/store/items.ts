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
  return rangeCondition(attributes.pk, attributes.sk, partition, range);
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
 * Where a paged query reads, so a page can start by key condition (ADR 0097): the table's or
 * GSI1's partition, the sort key range within it, and the direction.
 */
export interface Seek {
  /** GSI1 (`GSI1PK`/`GSI1SK`) rather than the table's keys. */
  index?: boolean;
  partition: string;
  range?: SortKeyRange;
  backwards?: boolean;
}

/**
 * The lowest and highest sort key of a range. A prefix ends below the prefix followed by U+10FFFF,
 * the highest character: every string between the two starts with the prefix, and every key
 * whose character after the prefix is not U+10FFFF itself sorts below it (the listed keys hold
 * ids and names of ASCII characters).
 */
function boundsOf(range: SortKeyRange | undefined): { lower?: string; upper?: string } {
  if (range && 'from' in range) return { lower: range.from, upper: range.to };
  if (!range?.prefix) return {};
  return { lower: range.prefix, upper: `${range.prefix}\u{10FFFF}` };
}

/** DynamoDB's order of strings: their UTF-8 bytes (JavaScript's `<` compares UTF-16 units). */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The sort key attribute a seek reads. */
function sortKeyOf(seek: Seek): string {
  return seek.index ? attributes.gsi1sk : attributes.sk;
}

/**
 * The key condition of the page that follows `start` (a key DynamoDB or a cursor returned): the
 * range narrowed to begin at `start`'s sort key, with `start` itself as ExclusiveStartKey, so
 * DynamoDB seeks instead of walking the range up to it (DynamoDB Local walks: ADR 0021), and ties
 * of a GSI sort key keep DynamoDB's own order. Undefined when nothing of the range follows.
 */
export function seekCondition(
  seek: Seek,
  start?: Item,
):
  | {
      condition: Pick<
        QueryCommandInput,
        'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues'
      >;
      exclusiveStart?: Item;
    }
  | undefined {
  const pk = seek.index ? attributes.gsi1pk : attributes.pk;
  const sk = sortKeyOf(seek);
  const index = seek.index ? { IndexName: gsi1 } : {};
  const from = start?.[sk];
  const { lower, upper } = boundsOf(seek.range);
  const whole = () => ({
    condition: { ...index, ...rangeCondition(pk, sk, seek.partition, seek.range) },
  });
  if (typeof from !== 'string') return whole();
  // A position the listing has not reached yet starts it from its beginning; one it has passed ends it.
  const notReached = seek.backwards
    ? upper !== undefined && compareKeys(from, upper) > 0
    : lower !== undefined && compareKeys(from, lower) < 0;
  const passed = seek.backwards
    ? lower !== undefined && compareKeys(from, lower) < 0
    : upper !== undefined && compareKeys(from, upper) > 0;
  if (notReached) return whole();
  if (passed) return undefined;
  const bounds = seek.backwards ? [lower, from] : [from, upper];
  const [low, high] = bounds;
  const condition =
    low !== undefined && high !== undefined
      ? {
          KeyConditionExpression: `${pk} = :pk AND ${sk} BETWEEN :low AND :high`,
          ExpressionAttributeValues: { ':pk': seek.partition, ':low': low, ':high': high },
        }
      : {
          KeyConditionExpression: `${pk} = :pk AND ${sk} ${seek.backwards ? '<=' : '>='} :seek`,
          ExpressionAttributeValues: { ':pk': seek.partition, ':seek': from },
        };
  return { condition: { ...index, ...condition }, exclusiveStart: start };
}

/** A partition's key condition with a sort key range, on any pair of key attributes. */
function rangeCondition(
  pk: string,
  sk: string,
  partition: string,
  range?: SortKeyRange,
): Pick<QueryCommandInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'> {
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

/** The placeholders key conditions use (filters name theirs otherwise). */
const KEY_PLACEHOLDERS = [':pk', ':prefix', ':from', ':to', ':low', ':high', ':seek'];

/** A query's values without its key condition's (DynamoDB refuses values no expression uses). */
function withoutKeyPlaceholders(values: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => !KEY_PLACEHOLDERS.includes(k)));
}

/**
 * The paging loop: runs a Query page by page from `start`; `visit` sees each page and returns
 * false to stop. At most `maxPages` pages; `limit` (when given) sets each page's Limit. Returns
 * the key to go on from (undefined when the query is exhausted). With `seek` (what `input`
 * reads), every page after the first starts by key condition (ADR 0097).
 */
export async function queryPages(
  db: StoreClient,
  input: QueryCommandInput,
  visit: (items: Item[]) => boolean | undefined | Promise<boolean | undefined>,
  paging: { start?: Item; maxPages?: number; limit?: () => number; seek?: Seek } = {},
): Promise<Item | undefined> {
  let start = paging.start;
  for (let page = 0; page < (paging.maxPages ?? Number.POSITIVE_INFINITY); page++) {
    let pageInput: QueryCommandInput = { ...input, ExclusiveStartKey: start };
    if (paging.seek) {
      const next = seekCondition(paging.seek, start);
      if (!next) return undefined;
      pageInput = {
        ...input,
        ...next.condition,
        ExpressionAttributeValues: {
          ...withoutKeyPlaceholders(input.ExpressionAttributeValues),
          ...next.condition.ExpressionAttributeValues,
        },
        ExclusiveStartKey: next.exclusiveStart,
      };
    }
    const out = await storeCall(() =>
      db.send(new QueryCommand({ ...pageInput, ...(paging.limit ? { Limit: paging.limit() } : {}) })),
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
 * One page of an API listing: what `seek` reads, from the cursor (which must have `shape`), each
 * page by key condition (ADR 0097); a filter that leaves pages short reads on up to `fillRounds`
 * times to fill the page. The cursor is the last key DynamoDB evaluated, so a filtered page
 * resumes exactly after what it read.
 */
export async function listingPage(
  db: StoreClient,
  table: string,
  seek: Seek,
  limit: number,
  cursor: string | undefined,
  shape: CursorShape,
  options: Omit<QueryOptions, 'limit' | 'backwards'> & { fillRounds?: number } = {},
): Promise<{ items: Item[]; nextCursor?: string }> {
  const start = decodeCursor(cursor, shape);
  const items: Item[] = [];
  const { fillRounds = 1, ...query } = options;
  const next = await queryPages(
    db,
    queryInput(table, seek.index ? indexCondition(seek.partition) : keyCondition(seek.partition), {
      ...query,
      ...(seek.backwards ? { backwards: true } : {}),
    }),
    (page) => {
      items.push(...page);
      return items.length < limit;
    },
    { ...(start ? { start } : {}), maxPages: fillRounds, limit: () => limit - items.length, seek },
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
  options: Omit<QueryOptions, 'limit' | 'backwards'> & { fillRounds?: number } = {},
): Promise<{ items: Item[]; nextCursor?: string }> {
  return listingPage(
    db,
    table,
    { partition, range: { prefix } },
    limit,
    cursor,
    { [attributes.pk]: { equals: partition }, [attributes.sk]: { prefix } },
    options,
  );
}

/**
 * One page of a GSI1 listing (`partition`, optionally a sort key range); `itemKey` is what the
 * listed items' own keys look like (cursor check). With a filter, `fillRounds` reads on to fill
 * a short page.
 */
export function queryIndexPage(
  db: StoreClient,
  table: string,
  partition: string,
  limit: number,
  cursor: string | undefined,
  itemKey: { pk: CursorShape[string]; sk: CursorShape[string] },
  options: Omit<QueryOptions, 'limit' | 'consistent'> & { fillRounds?: number; range?: SortKeyRange } = {},
): Promise<{ items: Item[]; nextCursor?: string }> {
  const { backwards, range, ...rest } = options;
  return listingPage(
    db,
    table,
    { index: true, partition, ...(range ? { range } : {}), ...(backwards ? { backwards } : {}) },
    limit,
    cursor,
    {
      [attributes.pk]: itemKey.pk,
      [attributes.sk]: itemKey.sk,
      [attributes.gsi1pk]: { equals: partition },
      [attributes.gsi1sk]: true,
    },
    rest,
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
    { seek: { partition, range: { prefix } } },
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

/** What no entity's fields include: the key attributes and the entity tag. */
const notFields = new Set<string>([...keyAttributes, 'entity']);

/**
 * An item without its key attributes and entity tag (and the `extra` attributes named). On every
 * read of every list page (before the decoders, ADR 0144): a set lookup, no entry arrays.
 */
export function withoutKeys(item: Item, ...extra: string[]): Item {
  const rest: Item = {};
  for (const name of Object.keys(item)) {
    if (!notFields.has(name) && !extra.includes(name)) rest[name] = item[name];
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
