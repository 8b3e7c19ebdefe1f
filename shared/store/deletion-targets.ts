/**
 * The deletion workflow's writes that are not chunks (ADR 0070): one dependent layer group with
 * a step of progress, and the final transaction that deletes the target and completes the
 * operation. Each is fenced by the operation's phase and status.
 */
import { CorruptItemError, StaleExecutionError } from '#domain/chunked-workflow.ts';
import type { DeletionRun } from '#domain/deletion-phases.ts';
import type { LayerGroup } from '#domain/layer-groups.ts';
import { TransientError } from '#domain/workflows.ts';
import { transient, type WriteUnits } from './chunk-commits.ts';
import type { StoreClient } from './client.ts';
import { activeDeletionsChange, activeIndexRemoval, toOperation } from './deletions-repository.ts';
import { ConditionFailed } from './errors.ts';
import { getItem, writeUnits } from './items.ts';
import { keys } from './keys.ts';
import { DynamoLayerGroupRepository } from './layer-groups-repository.ts';
import { counterDeletes } from './plan-counters.ts';
import { summaryChange } from './summary-counters.ts';
import { type TransactItem, transact, unguarded } from './transactions.ts';

/** Built on first use: a module-level repository would read the configuration at import time. */
let groupRepository: DynamoLayerGroupRepository | undefined;
const groups = () => (groupRepository ??= new DynamoLayerGroupRepository());

/** Deletes one group (as deleteLayerGroup would) and counts it; false when it changed meanwhile. */
export async function removeGroup(
  db: StoreClient,
  table: string,
  units: WriteUnits,
  op: DeletionRun,
  g: LayerGroup,
): Promise<boolean> {
  const items = [
    ...groups()
      .deletionItems(g)
      .map((i) => unguarded(i.item)),
    unguarded({
      Update: {
        TableName: table,
        Key: keys.deletion(op.id),
        UpdateExpression:
          'SET progress.deleted = progress.deleted + :one, updated_at = :now, write_units = if_not_exists(write_units, :zero) + :w',
        ConditionExpression: 'phase = :phase AND #s = :running',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':zero': 0,
          ':w': units.take(),
          ':now': new Date().toISOString(),
          ':phase': 'layer_groups',
          ':running': 'running',
        },
      },
    }),
  ];
  try {
    const out = await transient(() =>
      transact(db, items, undefined, {
        consumedCapacity: true,
        onCancelled: (codes) =>
          codes[codes.length - 1] === 'ConditionalCheckFailed'
            ? new StaleExecutionError(`Deletion ${op.id} is no longer running.`)
            : new ConditionFailed(),
      }),
    );
    units.add(writeUnits(out));
    return true;
  } catch (error) {
    // The group changed meanwhile: the next round sees it as it is now.
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

function completion(table: string, units: WriteUnits, op: DeletionRun, now: string): TransactItem {
  return {
    Update: {
      TableName: table,
      Key: keys.deletion(op.id),
      // Finished: off the sweep's active index in the same write (ADR 0113).
      UpdateExpression: `SET #s = :completed, phase = :done, completed_at = :now, updated_at = :now, progress.deleted = progress.deleted + :one, write_units = if_not_exists(write_units, :zero) + :w REMOVE checkpoint_from, checkpoint_to, ${activeIndexRemoval}`,
      ConditionExpression: 'phase = :target AND #s = :running',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: {
        ':completed': 'completed',
        ':done': 'done',
        ':target': 'target',
        ':running': 'running',
        ':now': now,
        ':one': 1,
        ':zero': 0,
        ':w': units.take(),
      },
    },
  };
}

/** The target's items and the completion in one transaction (done already by another runner: fine). */
async function finish(
  db: StoreClient,
  table: string,
  units: WriteUnits,
  op: DeletionRun,
  items: TransactItem[],
): Promise<void> {
  try {
    await transient(() =>
      transact(
        db,
        [...items, completion(table, units, op, new Date().toISOString())].map(unguarded),
        undefined,
        {
          onCancelled: (codes) => {
            // The completion failed: done by another runner, or not this execution's any more.
            if (codes[codes.length - 1] === 'ConditionalCheckFailed') return new ConditionFailed();
            if (codes.includes('ConditionalCheckFailed')) {
              return new CorruptItemError(
                `The ${op.scope} ${op.target_id} is not the one this operation hid.`,
              );
            }
            return new TransientError('The final transaction was cancelled; retrying.');
          },
        },
      ),
    );
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    const item = await getItem(db, table, keys.deletion(op.id));
    if (!item) throw new StaleExecutionError(`Deletion operation ${op.id} does not exist.`);
    const current = toOperation(item);
    if (current.status === 'completed') return;
    throw new StaleExecutionError(`Deletion ${op.id} is ${current.status}.`);
  }
}

/** The service, its name marker, its mosaic state and harvest marker, its count in the workspace's running deletions. */
export async function removeService(db: StoreClient, table: string, units: WriteUnits, op: DeletionRun) {
  const service = await getItem(db, table, keys.service(op.workspace_id, op.target_id));
  // Its plan counters go with it (ADR 0101).
  const counters = await transient(() => counterDeletes(db, table, op.workspace_id, op.target_id));
  await finish(db, table, units, op, [
    {
      Delete: {
        TableName: table,
        Key: keys.service(op.workspace_id, op.target_id),
        ConditionExpression: 'deletion_id = :op',
        ExpressionAttributeValues: { ':op': op.id },
      },
    },
    ...(service
      ? [
          {
            Delete: {
              TableName: table,
              Key: keys.serviceName(op.workspace_id, service.name as string),
              ConditionExpression: 'service_id = :id',
              ExpressionAttributeValues: { ':id': op.target_id },
            },
          },
        ]
      : []),
    { Delete: { TableName: table, Key: keys.mosaic(op.workspace_id, op.target_id) } },
    // The harvest marker of a job whose execution was lost (its job items went in `mosaic_jobs`).
    { Delete: { TableName: table, Key: keys.mosaicHarvestLock(op.workspace_id, op.target_id) } },
    activeDeletionsChange(table, op.workspace_id, -1).item,
    ...counters,
    // The summary counts one service fewer (ADR 0137); its layers were counted off chunk by chunk.
    ...(service
      ? summaryChange(table, op.workspace_id, op.target_id, { services: -1 }).map((g) => g.item)
      : []),
  ]);
}

/** The workspace item and its name marker (its usage key is a pool's, shared: ADR 0111). */
export async function removeWorkspace(db: StoreClient, table: string, units: WriteUnits, op: DeletionRun) {
  await finish(db, table, units, op, [
    {
      Delete: {
        TableName: table,
        Key: keys.workspace(op.workspace_id),
        ConditionExpression: 'deletion_id = :op',
        ExpressionAttributeValues: { ':op': op.id },
      },
    },
    {
      Delete: {
        TableName: table,
        Key: keys.workspaceName(op.workspace_name),
        ConditionExpression: 'workspace_id = :id',
        ExpressionAttributeValues: { ':id': op.workspace_id },
      },
    },
  ]);
}
