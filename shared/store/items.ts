import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { translateStoreError } from './errors.ts';
import type { Key } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';

/** One strongly consistent GetItem; store failures become domain errors (503). */
export async function getItem(
  db: DynamoDBDocumentClient,
  table: string,
  key: Key,
): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
    return out.Item;
  } catch (error) {
    translateStoreError(error);
  }
}

/**
 * One page of the items of a partition whose sort keys start with `prefix` — the shape of every
 * "children of X" listing. The cursor is pinned to that partition and prefix.
 */
export async function queryPrefixPage(
  db: DynamoDBDocumentClient,
  table: string,
  partition: string,
  prefix: string,
  limit: number,
  cursor: string | undefined,
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> },
): Promise<{ items: Record<string, unknown>[]; nextCursor?: string }> {
  const start = decodeCursor(cursor, { PK: { equals: partition }, SK: { prefix } });
  try {
    const out = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
        ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: filter.names } : {}),
        ExpressionAttributeValues: { ':p': partition, ':s': prefix, ...filter?.values },
        Limit: limit,
        ExclusiveStartKey: start,
      }),
    );
    return { items: out.Items ?? [], nextCursor: encodeCursor(out.LastEvaluatedKey) };
  } catch (error) {
    translateStoreError(error);
  }
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
  db: DynamoDBDocumentClient,
  table: string,
  partition: string,
  prefix: string,
  visit: (items: Record<string, unknown>[]) => void | Promise<void>,
  projection?: { expression: string; names?: Record<string, string> },
): Promise<void> {
  let start: Record<string, unknown> | undefined;
  try {
    do {
      const out = await db.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: prefix ? 'PK = :p AND begins_with(SK, :s)' : 'PK = :p',
          ExpressionAttributeValues: { ':p': partition, ...(prefix ? { ':s': prefix } : {}) },
          ...(projection
            ? { ProjectionExpression: projection.expression, ExpressionAttributeNames: projection.names }
            : {}),
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      await visit(out.Items ?? []);
      start = out.LastEvaluatedKey;
    } while (start);
  } catch (error) {
    translateStoreError(error);
  }
}

/** Items by key, 100 per BatchGetItem, unprocessed keys retried with backoff. Missing keys are absent. */
export async function batchGetItems(
  db: DynamoDBDocumentClient,
  table: string,
  itemKeys: Key[],
  projection?: { expression: string; names?: Record<string, string> },
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  try {
    for (let i = 0; i < itemKeys.length; i += 100) {
      let request: Key[] = itemKeys.slice(i, i + 100);
      for (let attempt = 0; request.length > 0; attempt++) {
        if (attempt > 0) await backoff(attempt);
        const out = await db.send(
          new BatchGetCommand({
            RequestItems: {
              [table]: {
                Keys: request,
                ConsistentRead: true,
                ...(projection
                  ? {
                      ProjectionExpression: projection.expression,
                      ExpressionAttributeNames: projection.names,
                    }
                  : {}),
              },
            },
          }),
        );
        found.push(...(out.Responses?.[table] ?? []));
        request = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Key[];
      }
    }
  } catch (error) {
    translateStoreError(error);
  }
  return found;
}

/**
 * Deletes items by key, 25 per BatchWriteItem, unprocessed ones retried with backoff (deleting a
 * missing item is a no-op, so a repeat is harmless). Returns the write units consumed.
 */
export async function batchDeleteKeys(
  db: DynamoDBDocumentClient,
  table: string,
  itemKeys: Key[],
): Promise<number> {
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
        const out = await db.send(
          new BatchWriteCommand({ RequestItems: { [table]: request }, ReturnConsumedCapacity: 'TOTAL' }),
        );
        units += writeUnits(out);
        request = (out.UnprocessedItems?.[table] ?? []) as typeof request;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(BATCH_WRITERS, batches.length) }, worker));
  } catch (error) {
    translateStoreError(error);
  }
  return units;
}

/** BatchWriteItem requests in flight at once per deletion. */
const BATCH_WRITERS = 4;

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
  return new Promise((r) => setTimeout(r, ms));
}
