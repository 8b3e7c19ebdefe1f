import { PutCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '#config/env.ts';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
import { CONCURRENT_MODIFICATION } from '#domain/last-writer-wins.ts';
import { type AuditRetention, auditPutFor } from './audit-records.ts';
import type { StoreClient } from './client.ts';
import { isTransactionConflict, storeCall } from './errors.ts';
import { type Key, keys } from './keys.ts';
import { itemAbsent } from './table.ts';

export { isTransactionConflict };

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction with the domain error to throw when its condition fails. */
export interface GuardedItem {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

/** How a caller that reads the whole cancellation (the deletion workflow) runs a transaction. */
export interface TransactOptions {
  /** Ask DynamoDB for the write units consumed (`ConsumedCapacity` of the answer). */
  consumedCapacity?: boolean;
  /** A lock or bookkeeping that changes nothing a client sees: no audit record, no event (ADR 0094). */
  unaudited?: boolean;
  /** Every cancelled transaction, whatever its reasons, before the items' own errors (undefined: those). */
  onCancelled?: (codes: string[], error: unknown) => Error | undefined;
}

/**
 * Runs a TransactWriteItems — every transaction of the store goes through here — and maps a
 * failed condition to the error of the item that failed, so each repository states its
 * conditions and their meaning side by side. Update paths pass `onTransactionConflict` (their
 * concurrent-modification error) so a transaction conflict is retried like a lost version race
 * (ADR 0075); without it a conflict stays a 503.
 */
export async function transact(
  db: StoreClient,
  items: GuardedItem[],
  onTransactionConflict?: () => Error,
  options: TransactOptions = {},
) {
  // The audit record of the change rides in the same transaction (ADR 0094): it exists exactly
  // when the change committed, and the catalog events are read from it. Appended last, so the
  // items' indexes (their errors) stay as the caller numbered them.
  const writes = items.map((i) => i.item);
  const audit = options.unaudited ? undefined : auditPutFor(writes, auditRetention());
  const separate = audit !== undefined && writes.length >= MAX_TRANSACTION_ITEMS;
  if (audit && !separate) writes.push(audit);
  const out = await storeCall(
    () =>
      db.send(
        new TransactWriteCommand({
          TransactItems: writes,
          ...(options.consumedCapacity ? { ReturnConsumedCapacity: 'TOTAL' } : {}),
        }),
      ),
    {
      onConditionFailed: (index) => items[index]?.onConditionFailed?.(),
      ...(onTransactionConflict ? { onTransactionConflict } : {}),
      ...(options.onCancelled ? { onCancelled: options.onCancelled } : {}),
    },
  );
  // A full transaction (100 items) has no room: its record follows it (not atomic; ADR 0094).
  if (audit?.Put && separate) {
    await storeCall(() =>
      db.send(new PutCommand({ TableName: audit.Put?.TableName, Item: audit.Put?.Item })),
    );
  }
  return out;
}

/** DynamoDB's limit of items per TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** The audit records' retention (days, from configuration). */
function auditRetention(): AuditRetention {
  return { days: config().AUDIT_RETENTION_DAYS };
}

/** Carries the answer of a cancelled transaction out of `transact` (see `transactOr`). */
class Answer<T> extends Error {
  constructor(readonly value: T) {
    super('transaction cancelled');
  }
}

/**
 * A transaction whose cancellation can be an answer rather than an error (a lost race to retry,
 * an item already gone): `interpret` maps the cancellation reasons to that answer, or throws, or
 * gives undefined for the items' own errors and the usual translation. Undefined when written.
 */
export async function transactOr<T>(
  db: StoreClient,
  items: GuardedItem[],
  interpret: (codes: string[]) => T | undefined,
  options: Pick<TransactOptions, 'unaudited'> = {},
): Promise<T | undefined> {
  try {
    await transact(db, items, undefined, {
      ...options,
      onCancelled: (codes) => {
        const value = interpret(codes);
        return value === undefined ? undefined : new Answer(value);
      },
    });
    return undefined;
  } catch (error) {
    if (error instanceof Answer) return error.value as T;
    throw error;
  }
}

/**
 * An unaudited transaction (bookkeeping, ADR 0094) that may lose a race: true when written, false
 * when a condition failed or a concurrent transaction conflicted — what it checked changed, and the
 * caller reads again (the counters' bases, the integrity check's repairs).
 */
export async function transactUnlessRaced(db: StoreClient, items: TransactItem[]): Promise<boolean> {
  const raced = await transactOr(
    db,
    items.map((item) => ({ item })),
    (codes) => codes.some((c) => c === 'ConditionalCheckFailed' || c === 'TransactionConflict') || undefined,
    { unaudited: true },
  );
  return raced !== true;
}

/** An item of a transaction whose failed condition means nothing more than a bug (or a 503). */
export function unguarded(item: TransactItem): GuardedItem {
  return { item };
}

/** The error of an update that lost to a concurrent writer (retried by last-writer-wins, else 409). */
export function concurrentModification(what: string): () => StateConflictError {
  return () =>
    new StateConflictError(
      CONCURRENT_MODIFICATION,
      `${what} was changed by another request; read it again and retry.`,
    );
}

/** The condition of an optimistic write: the stored item is still at `version`. */
export function versionIs(version: number): {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
} {
  return {
    ConditionExpression: '#v = :v',
    ExpressionAttributeNames: { '#v': 'version' },
    ExpressionAttributeValues: { ':v': version },
  };
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
    item: { Put: { TableName: table, Item: item, ConditionExpression: itemAbsent } },
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
