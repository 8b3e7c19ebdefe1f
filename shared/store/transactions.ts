import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../domain/errors.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { type Key, keys } from './keys.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction with the domain error to throw when its condition fails. */
export interface GuardedItem {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

/**
 * Runs a TransactWriteItems and maps a failed condition to the error of the item that failed, so
 * each repository states its conditions and their meaning side by side.
 */
export async function transact(db: DynamoDBDocumentClient, items: GuardedItem[]): Promise<void> {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: items.map((i) => i.item) }));
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes) {
      const failed = codes.indexOf('ConditionalCheckFailed');
      const onFailed = failed >= 0 ? items[failed]?.onConditionFailed : undefined;
      if (onFailed) throw onFailed();
    }
    translateStoreError(error);
  }
}

/** A ConditionCheck that the item (a workspace, service, role…) is `active`, as its own transaction item. */
export function activeCheck(table: string, key: Key, onConditionFailed?: () => Error): GuardedItem {
  return {
    item: {
      ConditionCheck: {
        TableName: table,
        Key: key,
        ConditionExpression: '#s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':active': 'active' },
      },
    },
    ...(onConditionFailed ? { onConditionFailed } : {}),
  };
}

/** A Put of an item that must not exist yet (an entity, or the marker that keeps a name unique). */
export function putNew(
  table: string,
  item: Record<string, unknown>,
  onConditionFailed?: () => Error,
): GuardedItem {
  return {
    item: { Put: { TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } },
    ...(onConditionFailed ? { onConditionFailed } : {}),
  };
}

/** The workspace a child is written into must still be active (404 otherwise). */
export function workspaceIsActive(table: string, workspaceId: string): GuardedItem {
  return activeCheck(
    table,
    keys.workspace(workspaceId),
    () => new NotFoundError('workspace_not_found', 'The workspace does not exist.'),
  );
}
