import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { translateStoreError } from './errors.ts';
import type { Key } from './keys.ts';

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
