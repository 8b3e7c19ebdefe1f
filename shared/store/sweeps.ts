/**
 * The store side of the scheduled sweeps (ADR 0093): the restart of a stuck deletion or job, and —
 * for the local host only — the removal of expired items that DynamoDB's TTL does by itself on AWS.
 */
import { DeleteCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeletionOperation } from '#domain/deletion-model.ts';
import type { HarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import type { StuckDeletionStore, StuckJobStore, SweepMark, Swept } from '#domain/sweeps.ts';
import type { TileCacheJob } from '#domain/tile-cache-jobs.ts';
import { documentClient, tableName } from './client.ts';
import { DynamoDeletionRepository } from './deletions-repository.ts';
import { conditionalWrite, storeCall } from './errors.ts';
import { DynamoRepository } from './items.ts';
import { keys } from './keys.ts';
import { DynamoHarvestJobRepository } from './mosaic-harvest-jobs-repository.ts';
import { attributes, tableDefinition } from './table.ts';
import { DynamoTileCacheJobRepository } from './tile-cache-repository.ts';

const ttl = tableDefinition.timeToLiveAttribute;

/** The deletions a sweep looks at and restarts. */
export class DynamoStuckDeletions extends DynamoRepository implements StuckDeletionStore {
  private readonly operations = new DynamoDeletionRepository();

  unfinished(visit: (op: Swept<DeletionOperation>) => Promise<void>): Promise<void> {
    return this.operations.unfinished(visit);
  }

  async restart(op: DeletionOperation, mark: SweepMark, now: string): Promise<DeletionOperation | undefined> {
    const next: DeletionOperation = {
      ...op,
      status: 'pending',
      attempt_count: op.attempt_count + 1,
      updated_at: now,
    };
    const written = await conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.deletion(op.id),
          // Still active, in the attempt read and without progress since (updated_at unchanged).
          UpdateExpression: 'SET #s = :pending, attempt_count = :next, updated_at = :now, sweep = :mark',
          ConditionExpression: '#s IN (:pending, :running) AND attempt_count = :prev AND updated_at = :seen',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':running': 'running',
            ':next': next.attempt_count,
            ':prev': op.attempt_count,
            ':seen': op.updated_at,
            ':now': now,
            ':mark': mark,
          },
        }),
      ),
    );
    return written ? next : undefined;
  }
}

/** The mosaic harvest jobs a sweep restarts (ADR 0136): the job store is the sweep's store. */
export function stuckHarvests(): StuckJobStore<HarvestJob> {
  return new DynamoHarvestJobRepository();
}

/** The tile cache jobs a sweep restarts (ADR 0139): the job store is the sweep's store. */
export function stuckTileCacheJobs(): StuckJobStore<TileCacheJob> {
  return new DynamoTileCacheJobRepository();
}

/**
 * Local stand-in for DynamoDB's TTL (DynamoDB Local never expires items): deletes every item whose
 * `expires_at_epoch` is in the past — sessions, login-failure windows, expired API keys and their
 * hash items, idempotency records. Each delete is conditioned on the item still being expired, so
 * one renewed meanwhile stays. A full Scan: fine for a local table, never used on AWS.
 */
export async function deleteExpiredItems(now = new Date()): Promise<number> {
  const db = documentClient();
  const table = tableName();
  const nowEpoch = Math.floor(now.getTime() / 1000);
  const expired = { '#ttl': ttl };
  let start: Record<string, unknown> | undefined;
  let deleted = 0;
  do {
    const page = await storeCall(() =>
      db.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: '#ttl < :now',
          ProjectionExpression: '#pk, #sk',
          ExpressionAttributeNames: { ...expired, '#pk': attributes.pk, '#sk': attributes.sk },
          ExpressionAttributeValues: { ':now': nowEpoch },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const key of page.Items ?? []) {
      const gone = await conditionalWrite(() =>
        db.send(
          new DeleteCommand({
            TableName: table,
            Key: key,
            ConditionExpression: '#ttl < :now',
            ExpressionAttributeNames: expired,
            ExpressionAttributeValues: { ':now': nowEpoch },
          }),
        ),
      );
      if (gone) deleted++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}
