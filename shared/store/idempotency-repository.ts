import { createHash } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore } from '#domain/idempotency.ts';
import { conditionalWrite } from './errors.ts';
import { DynamoRepository } from './items.ts';
import { entities, type Key, keys } from './keys.ts';
import { itemAbsent, tableDefinition } from './table.ts';

const ttl = tableDefinition.timeToLiveAttribute;

/** The record's key: the SHA-256 of the scope, so any principal id or client key fits a key string. */
function keyOf(scope: IdempotencyScope): Key {
  const hash = createHash('sha256')
    .update(JSON.stringify([scope.principalId, scope.operationId, scope.key]))
    .digest('hex');
  return keys.idempotencyRecord(hash);
}

// A record may be taken over when it is absent, past its 24 h (TTL deletes lazily, so the time is
// checked here), or an in-progress claim past its deadline (its process died: ADR 0088).
const claimable = `${itemAbsent} OR ${ttl} < :nowEpoch OR (#status = :inProgress AND in_progress_until < :nowMs)`;

/** Reads a live record as the port returns it; undefined when there is none to answer with. */
function liveRecord(item: Record<string, unknown> | undefined, nowMs: number): IdempotencyRecord | undefined {
  if (!item || Number(item[ttl]) < Math.floor(nowMs / 1000)) return undefined;
  const fingerprint = String(item.fingerprint);
  if (item.status === 'completed')
    return { status: 'completed', fingerprint, response: String(item.response) };
  if (Number(item.in_progress_until) < nowMs) return undefined;
  return { status: 'in_progress', fingerprint };
}

/**
 * DynamoDB implementation of the idempotency port (ADR 0088): one item per (principal, operation,
 * key) with a conditional claim, the sealed answer and the table's TTL attribute.
 */
export class DynamoIdempotencyStore extends DynamoRepository implements IdempotencyStore {
  async claim(
    scope: IdempotencyScope,
    claim: { claimId: string; fingerprint: string; nowMs: number; inProgressUntilMs: number },
  ): Promise<IdempotencyRecord | undefined> {
    const key = keyOf(scope);
    // Two rounds: a record read back as gone (released or expired meanwhile) is claimed again.
    for (let round = 0; round < 2; round++) {
      const written = await conditionalWrite(() =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: {
              ...key,
              entity: entities.idempotencyRecord,
              principal_id: scope.principalId,
              operation_id: scope.operationId,
              status: 'in_progress',
              fingerprint: claim.fingerprint,
              claim_id: claim.claimId,
              in_progress_until: claim.inProgressUntilMs,
              // A crashed claim leaves nothing behind for long: TTL at its deadline.
              [ttl]: Math.ceil(claim.inProgressUntilMs / 1000),
              created_at: new Date(claim.nowMs).toISOString(),
            },
            ConditionExpression: claimable,
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':nowEpoch': Math.floor(claim.nowMs / 1000),
              ':nowMs': claim.nowMs,
              ':inProgress': 'in_progress',
            },
          }),
        ),
      );
      if (written) return undefined;
      const live = liveRecord(await this.get(key), claim.nowMs);
      if (live) return live;
    }
    // Taken again between our read and write twice: answer as if it were running.
    return { status: 'in_progress', fingerprint: claim.fingerprint };
  }

  async complete(
    scope: IdempotencyScope,
    claimId: string,
    response: string,
    expiresAtEpoch: number,
  ): Promise<boolean> {
    return conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keyOf(scope),
          UpdateExpression: `SET #status = :completed, #response = :response, ${ttl} = :expires REMOVE in_progress_until`,
          // Only the claim's owner completes it (an expired claim may have been taken over).
          ConditionExpression: 'claim_id = :claim',
          ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
          ExpressionAttributeValues: {
            ':completed': 'completed',
            ':response': response,
            ':expires': expiresAtEpoch,
            ':claim': claimId,
          },
        }),
      ),
    );
  }

  async release(scope: IdempotencyScope, claimId: string): Promise<void> {
    // An Update, not a Delete: the record is made claimable at once (and left to TTL), so POST
    // functions need no DeleteItem on the table (createWorkspace has none: ADR 0088).
    await conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keyOf(scope),
          UpdateExpression: `SET in_progress_until = :released, ${ttl} = :released`,
          ConditionExpression: 'claim_id = :claim AND #status = :inProgress',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':claim': claimId, ':inProgress': 'in_progress', ':released': 0 },
        }),
      ),
    );
  }
}
