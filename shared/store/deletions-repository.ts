import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import {
  type DeletionFilter,
  type DeletionOperation,
  type DeletionPlan,
  type DeletionRepository,
  STALLED_AFTER_MS,
  type StartedDeletion,
} from '#domain/deletions.ts';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import type { Service } from '#domain/services.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { decoder, text } from './decode.ts';
import { planService, planWorkspace } from './deletion-plans.ts';
import { ConditionFailed, conditionalWrite, storeCall } from './errors.ts';
import {
  batchGetItems,
  DynamoRepository,
  forEachPrefixPage,
  indexCondition,
  keyCondition,
  queryIndexPage,
  queryInput,
  queryPage,
  queryPages,
} from './items.ts';
import { entities, type Key, keyOf, keys, parseKey } from './keys.ts';
import { counterDeletes } from './plan-counters.ts';
import { attributes, gsi2, itemAbsent, itemExists } from './table.ts';
import {
  activeCheck,
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  unguarded,
} from './transactions.ts';

/** What the write that finishes a deletion removes: its entry on the sweep's active index (ADR 0113). */
export const activeIndexRemoval = `${attributes.gsi2pk}, ${attributes.gsi2sk}`;

/** A deletion that is still active (the sweep's and the resume's concern). */
const ACTIVE_FILTER = {
  expression: '#s IN (:pending, :running)',
  names: { '#s': 'status' },
  values: { ':pending': 'pending', ':running': 'running' },
};

/** How long after the active index was completed recent deletions are checked for an entry (ADR 0113). */
const LEGACY_GRACE_MS = 24 * 3600_000;
/** How far before that moment the check reaches (a previous version's function still serving). */
const LEGACY_LOOKBACK_MS = 3600_000;

/** A stored deletion operation (the workflow's own attributes, a checkpoint, kept beside its fields). */
export const toOperation = /* @__PURE__ */ decoder<DeletionOperation>('deletion operation', () =>
  z.looseObject({
    id: z.string(),
    scope: text<DeletionOperation['scope']>(),
    workspace_id: z.string(),
    workspace_name: z.string(),
    target_id: z.string(),
    target_name: z.string(),
    status: text<DeletionOperation['status']>(),
    phase: text<DeletionOperation['phase']>(),
    progress: z.looseObject({ total: z.number(), deleted: z.number() }),
    attempt_count: z.number(),
    last_error: z.optional(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.optional(z.string()),
    created_by: z.string(),
    write_units: z.optional(z.number()),
  }),
);

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
        ...(delta < 0 ? { ConditionExpression: itemExists } : {}),
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':e': entities.activeDeletions, ':d': delta },
      },
    },
  };
}

/** DynamoDB implementation of the deletion port (operations live in their own partitions). */
export class DynamoDeletionRepository extends DynamoRepository implements DeletionRepository {
  servicePlan(service: Service, options: { recordCounts?: boolean } = {}): Promise<DeletionPlan> {
    return planService(this.db, this.table, service, options.recordCounts ?? false);
  }

  workspacePlan(workspace: Workspace): Promise<DeletionPlan> {
    return planWorkspace(this.db, this.table, workspace);
  }

  private putOperation(op: DeletionOperation, plan: DeletionPlan): GuardedItem[] {
    return [
      putNew(this.table, {
        ...keys.deletion(op.id),
        ...keys.deletionListing(op.created_at, op.id),
        // On the sweep's index while active (ADR 0113): it starts pending.
        ...keys.deletionActive(op.created_at, op.id),
        entity: entities.deletion,
        ...op,
      }),
      unguarded({
        Put: {
          TableName: this.table,
          Item: { ...keys.deletionPlan(op.id), entity: entities.deletion, plan },
        },
      }),
    ];
  }

  private countActive(workspaceId: string, delta: 1 | -1): GuardedItem {
    return activeDeletionsChange(this.table, workspaceId, delta);
  }

  async hideService(service: Service): Promise<void> {
    await transact(
      this.db,
      [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: keys.service(service.workspace_id, service.id),
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
          onConditionFailed: concurrentModification('The service'),
        },
      ],
      undefined,
      // Hidden while checked, shown again when refused: a lock, not a change (ADR 0094).
      { unaudited: true },
    );
  }

  async unhideService(service: Service): Promise<void> {
    await transact(
      this.db,
      [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: keys.service(service.workspace_id, service.id),
              UpdateExpression: 'SET #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':active': 'active' },
            },
          },
        },
      ],
      undefined,
      { unaudited: true },
    );
  }

  async removeHiddenService(service: Service): Promise<void> {
    // Its plan counters (ADR 0101) go with it.
    const counters = await counterDeletes(this.db, this.table, service.workspace_id, service.id);
    await this.removeHarvestJobs(service);
    await transact(this.db, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.service(service.workspace_id, service.id),
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
      // And the harvest marker of a job that has not finished (ADR 0136).
      {
        item: {
          Delete: { TableName: this.table, Key: keys.mosaicHarvestLock(service.workspace_id, service.id) },
        },
      },
      ...counters.map(unguarded),
    ]);
  }

  /**
   * A hidden mosaic's harvest job items (ADR 0136), before the service goes: none can be added
   * any more (a job's create checks the service is active), and a job's later writes are
   * conditioned on its status, so none comes back. Few per mosaic: one DeleteItem each.
   */
  private async removeHarvestJobs(service: Service): Promise<void> {
    if (service.type !== 'raster_mosaic') return;
    const jobs: Key[] = [];
    await forEachPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(service.workspace_id),
      keys.mosaicHarvestJobPrefix(service.id),
      (items) => {
        for (const i of items) jobs.push(keyOf(i));
      },
      { expression: `${attributes.pk}, ${attributes.sk}` },
    );
    for (let i = 0; i < jobs.length; i += 10) {
      await Promise.all(
        jobs
          .slice(i, i + 10)
          .map((Key) => storeCall(() => this.db.send(new DeleteCommand({ TableName: this.table, Key })))),
      );
    }
  }

  /** Hides a service or workspace for this operation (only while it is `active`, and at `version` when given). */
  private hide(key: Key, op: DeletionOperation, version?: number): GuardedItem {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET #s = :deleting, deletion_id = :op, updated_at = :now',
          ConditionExpression: version === undefined ? '#s = :active' : '#s = :active AND #v = :v',
          ExpressionAttributeNames: { '#s': 'status', ...(version === undefined ? {} : { '#v': 'version' }) },
          ExpressionAttributeValues: {
            ':deleting': 'deleting',
            ':active': 'active',
            ':op': op.id,
            ':now': op.created_at,
            ...(version === undefined ? {} : { ':v': version }),
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
    lost: (current: Record<string, unknown> | undefined) => Error,
  ): Promise<StartedDeletion> {
    try {
      await transact(this.db, items, undefined, {
        onCancelled: (codes) => (codes[0] === 'ConditionalCheckFailed' ? new ConditionFailed() : undefined),
      });
      return { operation: op, plan };
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      const current = await this.get(key);
      const id = current?.status === 'deleting' ? (current.deletion_id as string | undefined) : undefined;
      const found = id ? await this.find(id) : undefined;
      if (!found) throw lost(current);
      return found;
    }
  }

  startServiceDeletion(
    service: Service,
    op: DeletionOperation,
    plan: DeletionPlan,
    version?: number,
  ): Promise<StartedDeletion> {
    const key = keys.service(service.workspace_id, service.id);
    return this.startOrJoin(
      key,
      [
        this.hide(key, op, version),
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
      (current) =>
        // Still there and active: it was changed since it was read (its version condition failed).
        current?.status === 'active'
          ? new StateConflictError(
              'concurrent_modification',
              'The service was changed by another request; retry.',
            )
          : new NotFoundError(
              'service_not_found',
              `Service '${service.name}' does not exist in this workspace.`,
            ),
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
              ConditionExpression: `${itemAbsent} OR #c <= :zero`,
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
    // The operation and its plan share a partition: one round trip.
    const items = await queryPage(
      this.db,
      queryInput(this.table, keyCondition(keys.deletion(id).PK), { consistent: true }),
    );
    const op = items.find((i) => i.SK === keys.deletion(id).SK);
    const plan = items.find((i) => i.SK === keys.deletionPlan(id).SK)?.plan as DeletionPlan | undefined;
    return op && plan ? { operation: toOperation(op), plan } : undefined;
  }

  async plansOf(ids: string[]): Promise<Map<string, DeletionPlan>> {
    const items = await batchGetItems(
      this.db,
      this.table,
      ids.map((id) => keys.deletionPlan(id)),
    );
    return new Map(items.map((i) => [parseKey.deletionId(i.PK as string), i.plan as DeletionPlan]));
  }

  async list(filter: DeletionFilter, limit: number, cursor?: string): Promise<Page<DeletionOperation>> {
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    if (filter.workspaceId) {
      conditions.push('workspace_id = :ws');
      values[':ws'] = filter.workspaceId;
    }
    if (filter.status) {
      conditions.push('#st = :st');
      names['#st'] = 'status';
      values[':st'] = filter.status;
    }
    // A filter may leave a page short: read on (a bounded number of times) to fill it.
    const page = await queryIndexPage(
      this.db,
      this.table,
      keys.deletionListingPartition,
      limit,
      cursor,
      { pk: { prefix: keys.deletionPartitionPrefix }, sk: { equals: keys.deletion('x').SK } },
      {
        ...(conditions.length ? { filter: { expression: conditions.join(' AND '), names, values } } : {}),
        backwards: true,
        fillRounds: 10,
      },
    );
    return { items: page.items.map(toOperation), nextCursor: page.nextCursor };
  }

  /**
   * The operations left pending or running (the sweep; a host resumes them when it starts): the
   * sparse index GSI2, which holds only those (ADR 0113), so finished ones cost nothing.
   */
  async unfinished(visit: (operation: DeletionOperation) => Promise<void>): Promise<void> {
    await this.indexUnindexedActive();
    await queryPages(
      this.db,
      queryInput(
        this.table,
        {
          IndexName: gsi2,
          KeyConditionExpression: `${attributes.gsi2pk} = :pk`,
          ExpressionAttributeValues: { ':pk': keys.deletionActivePartition },
        },
        // The index is eventually consistent: an operation finished a moment ago may still be there.
        { filter: ACTIVE_FILTER },
      ),
      async (items) => {
        for (const item of items) await visit(toOperation(item));
        return true;
      },
    );
  }

  /**
   * Puts on the active index the operations a version without it left active (ADR 0113): on the
   * first call, every active one on the DELETIONS listing (then the `deletionActiveIndexed` mark
   * is written); for a day after the mark, those created from an hour before it, which a function
   * of the previous version may still have started during the deploy. Afterwards: one GetItem.
   */
  private async indexUnindexedActive(): Promise<void> {
    const mark = await this.get(keys.deletionActiveIndexed());
    const markedAt = typeof mark?.at === 'string' ? Date.parse(mark.at) : undefined;
    const now = Date.now();
    if (markedAt !== undefined && now - markedAt > LEGACY_GRACE_MS) return;
    const since = markedAt === undefined ? undefined : new Date(markedAt - LEGACY_LOOKBACK_MS).toISOString();
    const range = since === undefined ? undefined : { from: since, to: '~' };
    await queryPages(
      this.db,
      queryInput(this.table, indexCondition(keys.deletionListingPartition), {
        filter: {
          expression: `${ACTIVE_FILTER.expression} AND attribute_not_exists(${attributes.gsi2pk})`,
          names: ACTIVE_FILTER.names,
          values: ACTIVE_FILTER.values,
        },
      }),
      async (items) => {
        for (const item of items) await this.indexActive(toOperation(item));
        return true;
      },
      { seek: { index: true, partition: keys.deletionListingPartition, ...(range ? { range } : {}) } },
    );
    if (markedAt === undefined) {
      await storeCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: {
              ...keys.deletionActiveIndexed(),
              entity: entities.deletionActiveIndexed,
              at: new Date(now).toISOString(),
            },
          }),
        ),
      );
    }
  }

  /** Puts one operation on the active index, only while it is still active and not on it yet. */
  private async indexActive(op: DeletionOperation): Promise<void> {
    const entry = keys.deletionActive(op.created_at, op.id);
    await conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.deletion(op.id),
          UpdateExpression: `SET ${attributes.gsi2pk} = :apk, ${attributes.gsi2sk} = :ask`,
          ConditionExpression: `${ACTIVE_FILTER.expression} AND attribute_not_exists(${attributes.gsi2pk})`,
          ExpressionAttributeNames: ACTIVE_FILTER.names,
          ExpressionAttributeValues: { ...ACTIVE_FILTER.values, ':apk': entry.GSI2PK, ':ask': entry.GSI2SK },
        }),
      ),
    );
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
            // Active again: back on the sweep's index (ADR 0113).
            UpdateExpression: `SET #s = :pending, attempt_count = :n, updated_at = :now, ${attributes.gsi2pk} = :apk, ${attributes.gsi2sk} = :ask REMOVE last_error`,
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
              ':apk': keys.deletionActive(op.created_at, op.id).GSI2PK,
              ':ask': keys.deletionActive(op.created_at, op.id).GSI2SK,
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
