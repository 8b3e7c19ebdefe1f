import { DeleteCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StateConflictError } from '../domain/errors.ts';
import type { Session, SessionRepository } from '../domain/sessions.ts';
import { documentClient, tableName } from './client.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { getItem } from './items.ts';
import { entities, keys } from './keys.ts';

function item(s: Session) {
  // The TTL attribute lets DynamoDB remove expired sessions by itself.
  return {
    ...keys.session(s.token_hash),
    entity: entities.session,
    ...s,
    expires_at_epoch: Math.ceil(Date.parse(s.expires_at) / 1000),
  };
}

function toSession(raw: Record<string, unknown>): Session {
  const { PK: _pk, SK: _sk, entity: _e, expires_at_epoch: _ttl, ...s } = raw;
  return s as unknown as Session;
}

/** DynamoDB implementation of the session port; items are keyed by the hash of the session cookie. */
export class DynamoSessionRepository implements SessionRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async create(session: Session): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: item(session),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (error) {
      translateStoreError(error);
    }
  }

  async findByTokenHash(tokenHash: string): Promise<Session | undefined> {
    const out = await getItem(this.db, this.table, keys.session(tokenHash));
    return out ? toSession(out) : undefined;
  }

  async rotate(previous: Session, next: Session, now: string, graceUntil: string): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: keys.session(previous.token_hash),
                UpdateExpression: 'SET rotated_at = :now, grace_until = :grace',
                // Only one refresh can rotate a pair: the losers find rotated_at set.
                ConditionExpression:
                  'attribute_exists(PK) AND attribute_not_exists(rotated_at) AND expires_at > :now',
                ExpressionAttributeValues: { ':now': now, ':grace': graceUntil },
              },
            },
            {
              Put: {
                TableName: this.table,
                Item: item(next),
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') {
        throw new StateConflictError(
          'session_already_refreshed',
          'This session was refreshed by another request; use the newest cookies.',
        );
      }
      translateStoreError(error);
    }
  }

  async delete(tokenHash: string): Promise<void> {
    try {
      await this.db.send(new DeleteCommand({ TableName: this.table, Key: keys.session(tokenHash) }));
    } catch (error) {
      translateStoreError(error);
    }
  }

  async failedLogins(address: string, window: number): Promise<number> {
    const out = await getItem(this.db, this.table, keys.loginFailures(address, window));
    return Number(out?.count ?? 0);
  }

  async recordFailedLogin(address: string, window: number, expiresAtEpoch: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.loginFailures(address, window),
          UpdateExpression: 'ADD #c :one SET entity = :e, expires_at_epoch = :ttl',
          ExpressionAttributeNames: { '#c': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':e': entities.loginFailures, ':ttl': expiresAtEpoch },
        }),
      );
    } catch (error) {
      translateStoreError(error);
    }
  }
}
