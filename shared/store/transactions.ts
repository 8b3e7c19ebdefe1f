import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { NotFoundError, StateConflictError } from '../domain/errors.ts';
import { CONCURRENT_MODIFICATION } from '../domain/last-writer-wins.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { type Key, keys } from './keys.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction with the domain error to throw when its condition fails. */
export interface GuardedItem {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

/**
 * True when DynamoDB refused a write because another transaction held one of its items: a
 * transaction cancelled with a `TransactionConflict` reason, or a `TransactionConflictException`.
 * The write lost a race, exactly like a failed version condition (DynamoDB Local never says so;
 * tests inject it).
 */
export function isTransactionConflict(error: unknown): boolean {
  if ((error as { name?: string } | undefined)?.name === 'TransactionConflictException') return true;
  return cancellationCodes(error)?.includes('TransactionConflict') ?? false;
}

/**
 * Runs a TransactWriteItems and maps a failed condition to the error of the item that failed, so
 * each repository states its conditions and their meaning side by side. Update paths pass
 * `onTransactionConflict` (their concurrent-modification error) so a transaction conflict is
 * retried like a lost version race (ADR 0075); without it a conflict stays a 503.
 */
export async function transact(
  db: DynamoDBDocumentClient,
  items: GuardedItem[],
  onTransactionConflict?: () => Error,
): Promise<void> {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: items.map((i) => i.item) }));
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes) {
      const failed = codes.indexOf('ConditionalCheckFailed');
      const onFailed = failed >= 0 ? items[failed]?.onConditionFailed : undefined;
      if (onFailed) throw onFailed();
    }
    if (onTransactionConflict && isTransactionConflict(error)) throw onTransactionConflict();
    translateStoreError(error);
  }
}

/** The error of an update that lost to a concurrent writer (retried by last-writer-wins, else 409). */
export function concurrentModification(what: string): () => StateConflictError {
  return () =>
    new StateConflictError(
      CONCURRENT_MODIFICATION,
      `${what} was changed by another request; read it again and retry.`,
    );
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
