import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  type DeletionFilter,
  type DeletionOperation,
  type DeletionPlan,
  type DeletionRepository,
  STALLED_AFTER_MS,
  type StartedDeletion,
} from '../domain/deletions.ts';
import { NotFoundError, StateConflictError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import type { Service } from '../domain/services.ts';
import type { Workspace } from '../domain/workspaces.ts';
import { documentClient, tableName } from './client.ts';
import { planService, planWorkspace } from './deletion-plans.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { batchGetItems, getItem } from './items.ts';
import { entities, type Key, keys } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';
import { activeCheck, type GuardedItem, transact } from './transactions.ts';

/** Sort key of the plan item beside an operation (plans are large; operations change often). */
const PLAN_SK = 'PLAN';

export function toOperation(item: Record<string, unknown>): DeletionOperation {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g2, entity: _e, ...op } = item;
  return op as unknown as DeletionOperation;
}

/**
 * The change of a workspace's count of running service deletions (a workspace deletion waits for
 * zero): +1 creates the counter item, −1 needs it.
 */
export function activeDeletionsChange(table: string, workspaceId: string, delta: 1 | -1): GuardedItem {
  return {
    item: {
      Update: {
        TableName: table,
        Key: keys.activeDeletions(workspaceId),
        UpdateExpression: 'SET entity = :e ADD #c :d',
        ...(delta < 0 ? { ConditionExpression: 'attribute_exists(PK)' } : {}),
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':e': entities.activeDeletions, ':d': delta },
      },
    },
  };
}

/** DynamoDB implementation of the deletion port (operations live in their own partitions). */
export class DynamoDeletionRepository implements DeletionRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  servicePlan(service: Service): Promise<DeletionPlan> {
    return planService(this.db, this.table, service);
  }

  workspacePlan(workspace: Workspace): Promise<DeletionPlan> {
    return planWorkspace(this.db, this.table, workspace);
  }

  private putOperation(op: DeletionOperation, plan: DeletionPlan): GuardedItem[] {
    return [
      {
        item: {
          Put: {
            TableName: this.table,
            Item: {
              ...keys.deletion(op.id),
              ...keys.deletionListing(op.created_at, op.id),
              entity: entities.deletion,
              ...op,
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      },
      {
        item: {
          Put: {
            TableName: this.table,
            Item: { PK: keys.deletion(op.id).PK, SK: PLAN_SK, entity: entities.deletion, plan },
          },
        },
      },
    ];
  }

  private countActive(workspaceId: string, delta: 1 | -1): GuardedItem {
    return activeDeletionsChange(this.table, workspaceId, delta);
  }

  async deleteEmptyService(service: Service): Promise<boolean> {
    const key = keys.service(service.workspace_id, service.id);
    // Hide it first: from then on no layer or granule can be added (they condition on `active`),
    // so the emptiness check below can't race with a concurrent create.
    await transact(this.db, [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: key,
            UpdateExpression: 'SET #s = :deleting',
            ConditionExpression: '#s = :active AND #v = :v',
            ExpressionAttributeNames: { '#s': 'status', '#v': 'version' },
            ExpressionAttributeValues: {
              ':deleting': 'deleting',
              ':active': 'active',
              ':v': service.version,
            },
          },
        },
        onConditionFailed: () =>
          new StateConflictError(
            'concurrent_modification',
            'The service was changed by another request; retry.',
          ),
      },
    ]);
    const plan = await this.servicePlan(service);
    if (plan.layers.count > 0 || plan.layer_groups.count > 0 || plan.mosaic_granules > 0) {
      await transact(this.db, [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: key,
              UpdateExpression: 'SET #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':active': 'active' },
            },
          },
        },
      ]);
      return false;
    }
    await transact(this.db, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: key,
            ConditionExpression: '#s = :deleting',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':deleting': 'deleting' },
          },
        },
      },
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.serviceName(service.workspace_id, service.name),
            ConditionExpression: 'service_id = :id',
            ExpressionAttributeValues: { ':id': service.id },
          },
        },
      },
      // A mosaic that was harvested and emptied leaves its state item; it goes too.
      { item: { Delete: { TableName: this.table, Key: keys.mosaic(service.workspace_id, service.id) } } },
    ]);
    return true;
  }

  /** Hides a service or workspace for this operation (only while it is `active`). */
  private hide(key: Key, op: DeletionOperation): GuardedItem {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET #s = :deleting, deletion_id = :op, updated_at = :now',
          ConditionExpression: '#s = :active',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':deleting': 'deleting',
            ':active': 'active',
            ':op': op.id,
            ':now': op.created_at,
          },
        },
      },
    };
  }

  /**
   * Runs the transaction that hides `key` for `op` (its first item); when someone else hid it
   * first, answers with their operation, or with `lost()` when there is none to answer with.
   */
  private async startOrJoin(
    key: Key,
    items: GuardedItem[],
    op: DeletionOperation,
    plan: DeletionPlan,
    lost: () => Error,
  ): Promise<StartedDeletion> {
    try {
      await transact(this.db, items);
      return { operation: op, plan };
    } catch (error) {
      if (cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
      const current = await getItem(this.db, this.table, key);
      const id = current?.status === 'deleting' ? (current.deletion_id as string | undefined) : undefined;
      const found = id ? await this.find(id) : undefined;
      if (!found) throw lost();
      return found;
    }
  }

  startServiceDeletion(
    service: Service,
    op: DeletionOperation,
    plan: DeletionPlan,
  ): Promise<StartedDeletion> {
    const key = keys.service(service.workspace_id, service.id);
    return this.startOrJoin(
      key,
      [
        this.hide(key, op),
        ...this.putOperation(op, plan),
        // A workspace deletion waits for the service deletions running in it.
        this.countActive(service.workspace_id, 1),
        activeCheck(
          this.table,
          keys.workspace(service.workspace_id),
          () => new NotFoundError('workspace_not_found', 'The workspace no longer exists.'),
        ),
      ],
      op,
      plan,
      () =>
        new NotFoundError('service_not_found', `Service '${service.name}' does not exist in this workspace.`),
    );
  }

  startWorkspaceDeletion(
    workspace: Workspace,
    op: DeletionOperation,
    plan: DeletionPlan,
  ): Promise<StartedDeletion> {
    const key = keys.workspace(workspace.id);
    return this.startOrJoin(
      key,
      [
        this.hide(key, op),
        {
          item: {
            ConditionCheck: {
              TableName: this.table,
              Key: keys.activeDeletions(workspace.id),
              ConditionExpression: 'attribute_not_exists(PK) OR #c <= :zero',
              ExpressionAttributeNames: { '#c': 'count' },
              ExpressionAttributeValues: { ':zero': 0 },
            },
          },
          onConditionFailed: () =>
            new StateConflictError(
              'service_deletion_running',
              `A service of workspace '${workspace.name}' is being deleted; retry when that operation has finished.`,
            ),
        },
        ...this.putOperation(op, plan),
      ],
      op,
      plan,
      () =>
        new StateConflictError(
          'concurrent_modification',
          'The workspace was changed by another request; retry.',
        ),
    );
  }

  async find(id: string): Promise<{ operation: DeletionOperation; plan: DeletionPlan } | undefined> {
    try {
      // The operation and its plan share a partition: one round trip.
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :p',
          ExpressionAttributeValues: { ':p': keys.deletion(id).PK },
          ConsistentRead: true,
        }),
      );
      const items = out.Items ?? [];
      const op = items.find((i) => i.SK === keys.deletion(id).SK);
      const plan = items.find((i) => i.SK === PLAN_SK)?.plan as DeletionPlan | undefined;
      return op && plan ? { operation: toOperation(op), plan } : undefined;
    } catch (error) {
      translateStoreError(error);
    }
  }

  async plansOf(ids: string[]): Promise<Map<string, DeletionPlan>> {
    const items = await batchGetItems(
      this.db,
      this.table,
      ids.map((id) => ({ PK: keys.deletion(id).PK, SK: PLAN_SK })),
    );
    return new Map(items.map((i) => [(i.PK as string).slice('DELETION#'.length), i.plan as DeletionPlan]));
  }

  async list(filter: DeletionFilter, limit: number, cursor?: string): Promise<Page<DeletionOperation>> {
    let start = decodeCursor(cursor, {
      PK: { prefix: 'DELETION#' },
      SK: { equals: keys.deletion('x').SK },
      GSI1PK: { equals: keys.deletionListingPartition },
      GSI1SK: true,
    }) as Record<string, unknown> | undefined;
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':p': keys.deletionListingPartition };
    if (filter.workspaceId) {
      conditions.push('workspace_id = :ws');
      values[':ws'] = filter.workspaceId;
    }
    if (filter.status) {
      conditions.push('#st = :st');
      names['#st'] = 'status';
      values[':st'] = filter.status;
    }
    const items: DeletionOperation[] = [];
    try {
      // A filter may leave a page short: read on (a bounded number of times) to fill it.
      for (let round = 0; round < 10 && items.length < limit; round++) {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: 'GSI1',
            KeyConditionExpression: 'GSI1PK = :p',
            ...(conditions.length ? { FilterExpression: conditions.join(' AND ') } : {}),
            ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
            ScanIndexForward: false,
            Limit: limit - items.length,
            ExclusiveStartKey: start,
          }),
        );
        items.push(...(out.Items ?? []).map(toOperation));
        start = out.LastEvaluatedKey;
        if (!start) break;
      }
    } catch (error) {
      translateStoreError(error);
    }
    return { items, nextCursor: encodeCursor(start) };
  }

  async markRetry(op: DeletionOperation, now: string): Promise<DeletionOperation> {
    const next: DeletionOperation = {
      ...op,
      status: 'pending',
      attempt_count: op.attempt_count + 1,
      updated_at: now,
    };
    delete next.last_error;
    await transact(this.db, [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: keys.deletion(op.id),
            UpdateExpression: 'SET #s = :pending, attempt_count = :n, updated_at = :now REMOVE last_error',
            // Failed, or (as read) active without progress since :stale — a stalled execution.
            ConditionExpression:
              op.status === 'failed'
                ? '#s = :failed AND attempt_count = :prev'
                : '#s IN (:pending, :running) AND attempt_count = :prev AND updated_at < :stale',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':pending': 'pending',
              ':n': next.attempt_count,
              ':prev': op.attempt_count,
              ':now': now,
              ...(op.status === 'failed'
                ? { ':failed': 'failed' }
                : {
                    ':running': 'running',
                    ':stale': new Date(Date.parse(now) - STALLED_AFTER_MS).toISOString(),
                  }),
            },
          },
        },
        onConditionFailed: () =>
          new StateConflictError(
            'concurrent_modification',
            'The operation changed meanwhile; read it again.',
          ),
      },
      // A failed service deletion stopped counting as active in its workspace; it counts again.
      ...(op.scope === 'service' && op.status === 'failed'
        ? [
            this.countActive(op.workspace_id, 1),
            activeCheck(
              this.table,
              keys.workspace(op.workspace_id),
              () =>
                new StateConflictError(
                  'workspace_being_deleted',
                  'The workspace of this service is being deleted; its deletion removes the service.',
                ),
            ),
          ]
        : []),
    ]);
    return next;
  }
}
