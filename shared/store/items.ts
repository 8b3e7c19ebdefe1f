import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
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
