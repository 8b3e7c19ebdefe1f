import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
import { expiryEpoch } from '#domain/expiry.ts';
import type { Page } from '#domain/page.ts';
import type { ListedSession, Session, SessionHolder, SessionRepository } from '#domain/sessions.ts';
import { decoder, record, text } from './decode.ts';
import { storeCall } from './errors.ts';
import { DynamoRepository, queryIndexPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { attributes, itemExists } from './table.ts';
import { type GuardedItem, putNew, transact } from './transactions.ts';

function item(s: Session) {
  // The TTL attribute lets DynamoDB remove expired sessions by itself.
  return {
    ...keys.session(s.token_hash),
    entity: entities.session,
    ...s,
    expires_at_epoch: expiryEpoch(s.expires_at),
  };
}

/** Its key is the token's hash: an error names the session by its public id instead. */
const sessionId = (item: Record<string, unknown>) =>
  typeof item.session_id === 'string' ? `of session ${item.session_id}` : undefined;

/** A stored session pair (hashes only); what it stands on is checked as an API key's or a token's. */
export const toSession = /* @__PURE__ */ decoder<Session>(
  'session',
  () =>
    z.looseObject({
      session_id: z.string(),
      token_hash: z.string(),
      csrf_hash: z.string(),
      credential: z.discriminatedUnion('type', [
        z.looseObject({ type: z.literal('apikey'), key_hash: z.string(), key_id: z.string() }),
        z.looseObject({ type: z.literal('jwt'), sub: z.string(), claims: record() }),
      ]),
      expires_at: z.string(),
      idle_expires_at: z.string(),
      created_at: z.string(),
      rotated_at: z.optional(z.string()),
      grace_until: z.optional(z.string()),
      previous_token_hash: z.optional(z.string()),
      next_token_hash: z.optional(z.string()),
    }),
  { strip: ['expires_at_epoch'], describe: sessionId },
);

/** A stored listing entry of a session (ADR 0134). */
export const toListed = /* @__PURE__ */ decoder<ListedSession>(
  'browser session',
  () =>
    z.looseObject({
      session_id: z.string(),
      token_hash: z.string(),
      rotations: z.number(),
      created_at: z.string(),
      refreshed_at: z.optional(z.string()),
      expires_at: z.string(),
      idle_expires_at: z.string(),
      principal: z.string(),
      principal_id: z.string(),
      auth_method: text<ListedSession['auth_method']>(),
      api_key_id: z.optional(z.string()),
      issuer: z.optional(z.string()),
      super_admin: z.boolean(),
      workspace_roles: z.array(z.looseObject({ workspace: z.string(), role: z.string() })),
      workspace_role_count: z.number(),
    }),
  { strip: ['expires_at_epoch'], describe: sessionId },
);

/** The holder's attributes (absent optional ones left out: DynamoDB stores no undefined). */
function holderAttributes(holder: SessionHolder): Record<string, unknown> {
  return Object.fromEntries(Object.entries(holder).filter(([, v]) => v !== undefined));
}

/**
 * The listing entry of a session (ADR 0134), pointed at its newest pair. Its TTL is the absolute
 * expiry: no refresh outlives it, and the listing filters out what expired before DynamoDB removes it.
 */
function listedItem(s: Session, holder: SessionHolder) {
  return {
    ...keys.browserSession(s.session_id),
    ...keys.browserSessionListing(s.created_at, s.session_id),
    entity: entities.browserSession,
    session_id: s.session_id,
    token_hash: s.token_hash,
    ...holderAttributes(holder),
    rotations: 0,
    created_at: s.created_at,
    expires_at: s.expires_at,
    idle_expires_at: s.idle_expires_at,
    expires_at_epoch: expiryEpoch(s.expires_at),
  };
}

/** DynamoDB implementation of the session port; items are keyed by the hash of the session cookie. */
export class DynamoSessionRepository extends DynamoRepository implements SessionRepository {
  async create(session: Session, holder?: SessionHolder): Promise<void> {
    const writes: GuardedItem[] = [putNew(this.table, item(session))];
    if (holder) writes.push(putNew(this.table, listedItem(session, holder)));
    // A sign-in is no catalog change: its listing entry is bookkeeping, never an audit record.
    await transact(this.db, writes, undefined, { unaudited: true });
  }

  async findByTokenHash(tokenHash: string): Promise<Session | undefined> {
    const out = await this.get(keys.session(tokenHash));
    return out ? toSession(out) : undefined;
  }

  async rotate(
    previous: Session,
    next: Session,
    now: string,
    graceUntil: string,
    holder: SessionHolder,
  ): Promise<void> {
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
      { item: { Update: this.listedRotation(previous, next, now, holder) } },
    ]);
  }

  /**
   * The listing entry follows the rotation: the newest pair, the idle expiry, when it was
   * refreshed and who holds it now. A session signed in before the listing existed gets its entry
   * here (its first refresh), created at the replaced pair's `created_at`. `rotations` counts the
   * refreshes (the entry's version is one more); no `version` attribute is set, so a refresh is no
   * audited change (ADR 0094).
   */
  private listedRotation(previous: Session, next: Session, now: string, holder: SessionHolder) {
    const fields: Record<string, unknown> = {
      entity: entities.browserSession,
      session_id: next.session_id,
      token_hash: next.token_hash,
      ...holderAttributes(holder),
      refreshed_at: now,
      expires_at: next.expires_at,
      idle_expires_at: next.idle_expires_at,
      expires_at_epoch: expiryEpoch(next.expires_at),
    };
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets = Object.entries(fields).map(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:f${i}`] = value;
      return `#f${i} = :f${i}`;
    });
    const listing = keys.browserSessionListing(previous.created_at, next.session_id);
    names['#created'] = 'created_at';
    names['#gpk'] = attributes.gsi1pk;
    names['#gsk'] = attributes.gsi1sk;
    names['#rot'] = 'rotations';
    values[':zero'] = 0;
    values[':one'] = 1;
    values[':created'] = previous.created_at;
    values[':gpk'] = listing.GSI1PK;
    values[':gsk'] = listing.GSI1SK;
    return {
      TableName: this.table,
      Key: keys.browserSession(next.session_id),
      UpdateExpression: `SET ${sets.join(', ')}, #rot = if_not_exists(#rot, :zero) + :one, #created = if_not_exists(#created, :created), #gpk = if_not_exists(#gpk, :gpk), #gsk = if_not_exists(#gsk, :gsk)`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }

  async findListed(sessionId: string): Promise<ListedSession | undefined> {
    const out = await this.get(keys.browserSession(sessionId));
    return out ? toListed(out) : undefined;
  }

  async listListed(limit: number, cursor: string | undefined, now: string): Promise<Page<ListedSession>> {
    const page = await queryIndexPage(
      this.db,
      this.table,
      keys.browserSessionListingPartition,
      limit,
      cursor,
      { pk: { prefix: keys.browserSessionPartitionPrefix }, sk: { equals: keys.browserSessionSortKey } },
      {
        backwards: true,
        // Ended sessions stay until the TTL removes them; they are no longer sessions.
        filter: {
          expression: 'expires_at > :now AND idle_expires_at > :now',
          values: { ':now': now },
        },
        fillRounds: 5,
      },
    );
    return { items: page.items.map(toListed), nextCursor: page.nextCursor };
  }

  async removeListed(sessionId: string): Promise<void> {
    await storeCall(() =>
      this.db.send(new DeleteCommand({ TableName: this.table, Key: keys.browserSession(sessionId) })),
    );
  }

  async revokeListed(sessionId: string): Promise<void> {
    // A transaction, so its audit record rides along (ADR 0094): `browser_session … deleted`.
    await transact(this.db, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.browserSession(sessionId),
            ConditionExpression: itemExists,
          },
        },
        onConditionFailed: () => new NotFoundError('session_not_found', 'No browser session has this id.'),
      },
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
