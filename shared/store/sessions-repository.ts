import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StateConflictError } from '../domain/errors.ts';
import { expiryEpoch } from '../domain/expiry.ts';
import type { Session, SessionRepository } from '../domain/sessions.ts';
import { storeCall } from './errors.ts';
import { DynamoRepository, withoutKeys } from './items.ts';
import { entities, keys } from './keys.ts';
import { itemAbsent, itemExists } from './table.ts';
import { putNew, transact } from './transactions.ts';

function item(s: Session) {
  // The TTL attribute lets DynamoDB remove expired sessions by itself.
  return {
    ...keys.session(s.token_hash),
    entity: entities.session,
    ...s,
    expires_at_epoch: expiryEpoch(s.expires_at),
  };
}

function toSession(raw: Record<string, unknown>): Session {
  return withoutKeys(raw, 'expires_at_epoch') as unknown as Session;
}

/** DynamoDB implementation of the session port; items are keyed by the hash of the session cookie. */
export class DynamoSessionRepository extends DynamoRepository implements SessionRepository {
  async create(session: Session): Promise<void> {
    await storeCall(() =>
      this.db.send(
        new PutCommand({ TableName: this.table, Item: item(session), ConditionExpression: itemAbsent }),
      ),
    );
  }

  async findByTokenHash(tokenHash: string): Promise<Session | undefined> {
    const out = await this.get(keys.session(tokenHash));
    return out ? toSession(out) : undefined;
  }

  async rotate(previous: Session, next: Session, now: string, graceUntil: string): Promise<void> {
    await transact(this.db, [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: keys.session(previous.token_hash),
            // The rotated pair is refused after its grace, so the table's TTL may remove it then (ADR 0093).
            // It links to its successor, so a logout with either cookie ends both (ADR 0109).
            UpdateExpression:
              'SET rotated_at = :now, grace_until = :grace, expires_at_epoch = :graceEpoch, next_token_hash = :next',
            // Only one refresh can rotate a pair: the losers find rotated_at set.
            ConditionExpression: `${itemExists} AND attribute_not_exists(rotated_at) AND expires_at > :now`,
            ExpressionAttributeValues: {
              ':now': now,
              ':grace': graceUntil,
              ':graceEpoch': expiryEpoch(graceUntil),
              ':next': next.token_hash,
            },
          },
        },
        onConditionFailed: () =>
          new StateConflictError(
            'session_already_refreshed',
            'This session was refreshed by another request; use the newest cookies.',
          ),
      },
      putNew(this.table, item(next)),
    ]);
  }

  async delete(tokenHash: string): Promise<Session | undefined> {
    const out = await storeCall(() =>
      this.db.send(
        new DeleteCommand({ TableName: this.table, Key: keys.session(tokenHash), ReturnValues: 'ALL_OLD' }),
      ),
    );
    return out.Attributes ? toSession(out.Attributes) : undefined;
  }

  async failedLogins(address: string, window: number): Promise<number> {
    const out = await this.get(keys.loginFailures(address, window));
    return Number(out?.count ?? 0);
  }

  async recordFailedLogin(address: string, window: number, expiresAtEpoch: number): Promise<void> {
    await storeCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.loginFailures(address, window),
          UpdateExpression: 'ADD #c :one SET entity = :e, expires_at_epoch = :ttl',
          ExpressionAttributeNames: { '#c': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':e': entities.loginFailures, ':ttl': expiresAtEpoch },
        }),
      ),
    );
  }
}
