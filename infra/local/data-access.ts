import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DataAction } from '#api/operation.ts';
import { logger } from '#log/logger.ts';
import { keys } from '#store/keys.ts';

/**
 * Local stand-in for the IAM policies CDK derives from each route's `data`: while a handler runs
 * under `withDataAccess`, every DynamoDB call it makes must be one of its declared actions, or it
 * fails as AWS would (AccessDeniedException → a 500 that the tests catch). Transactions need the
 * action of each of their items, as in IAM.
 */
const scope = new AsyncLocalStorage<{ name: string; allowed: ReadonlySet<string> }>();

export function withDataAccess<T>(
  name: string,
  allowed: readonly DataAction[],
  fn: () => Promise<T>,
): Promise<T> {
  return scope.run({ name, allowed: new Set(allowed) }, fn);
}

const single: Record<string, DataAction | 'Scan' | 'TransactGetItems'> = {
  GetCommand: 'GetItem',
  GetItemCommand: 'GetItem',
  PutCommand: 'PutItem',
  PutItemCommand: 'PutItem',
  UpdateCommand: 'UpdateItem',
  UpdateItemCommand: 'UpdateItem',
  DeleteCommand: 'DeleteItem',
  DeleteItemCommand: 'DeleteItem',
  QueryCommand: 'Query',
  ScanCommand: 'Scan',
  BatchGetCommand: 'BatchGetItem',
  BatchGetItemCommand: 'BatchGetItem',
  BatchWriteCommand: 'BatchWriteItem',
  BatchWriteItemCommand: 'BatchWriteItem',
};

const transactItem: Record<string, DataAction> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/** A Put of an audit record (ADR 0094): IAM grants it by its partition key (`dynamodb:LeadingKeys`). */
function isAuditPut(put: unknown): boolean {
  const pk = (put as { Item?: Record<string, unknown> } | undefined)?.Item?.PK;
  return typeof pk === 'string' && pk.startsWith(keys.auditPartitionPrefix);
}

/** The IAM actions one command needs (an audit record's Put as `PutAuditRecord`). */
export function actionsOf(commandName: string, input: unknown): string[] {
  if (commandName === 'TransactWriteCommand' || commandName === 'TransactWriteItemsCommand') {
    const items = (input as { TransactItems?: Record<string, unknown>[] }).TransactItems ?? [];
    return [
      ...new Set(
        items.flatMap((i) =>
          Object.keys(i).map((k) =>
            k === 'Put' && isAuditPut(i.Put) ? 'PutAuditRecord' : (transactItem[k] ?? k),
          ),
        ),
      ),
    ];
  }
  if (commandName === 'TransactGetCommand' || commandName === 'TransactGetItemsCommand') return ['GetItem'];
  if ((commandName === 'PutCommand' || commandName === 'PutItemCommand') && isAuditPut(input)) {
    return ['PutAuditRecord'];
  }
  const action = single[commandName];
  return action ? [action] : [commandName];
}

export class LocalAccessDenied extends Error {
  override name = 'AccessDeniedException';
}

/** Installs the check on the process's document client (the local host only). */
export function installDataAccessCheck(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const current = scope.getStore();
      if (current) {
        // PutItem covers audit records too, as IAM's unconditioned PutItem would.
        const denied = actionsOf(context.commandName ?? '', args.input).filter(
          (a) => !current.allowed.has(a) && !(a === 'PutAuditRecord' && current.allowed.has('PutItem')),
        );
        if (denied.length > 0) {
          const message = `${current.name} is not allowed dynamodb:${denied.join(', dynamodb:')} (declare it in its data)`;
          logger.error(message);
          throw new LocalAccessDenied(message);
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'geoplaneLocalDataAccess' },
  );
}
