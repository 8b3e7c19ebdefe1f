import * as z from 'zod/mini';
import type { ApiKey, ApiKeyCredential, ApiKeyRepository, KeyRole } from '#domain/api-keys.ts';
import { NotFoundError } from '#domain/errors.ts';
import { apiKeyExpiry } from '#domain/expiry.ts';
import type { Page } from '#domain/page.ts';
import { decoder, text } from './decode.ts';
import { DynamoRepository, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { summaryChangeOf } from './summary-counters.ts';
import { itemExists, tableDefinition } from './table.ts';
import {
  activeCheck,
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  unguarded,
} from './transactions.ts';

/** The revoke's condition failed without a version: the key is gone, or was revoked meanwhile. */
class RevokedMeanwhile extends Error {}

const ttl = tableDefinition.timeToLiveAttribute;

const keyRole = () => text<KeyRole>();

/** An API key from its item: the fields of the domain type only (`z.object` drops the rest). */
export const toApiKey = /* @__PURE__ */ decoder<ApiKey>('API key', () =>
  z.object({
    id: z.string(),
    workspace_id: z.optional(z.string()),
    name: z.string(),
    role_id: keyRole(),
    key_prefix: z.string(),
    key_hash: z.string(),
    revoked: z.boolean(),
    expires_at: z.optional(z.string()),
    owner_email: z.optional(z.string()),
    owner_name: z.optional(z.string()),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

/** The credential item of a key, read by its hash (the authorizer's read too); its key names the key's id, never the hash. */
export const toApiKeyCredential = /* @__PURE__ */ decoder<ApiKeyCredential>(
  'API key credential',
  () =>
    z.looseObject({
      key_id: z.string(),
      workspace_id: z.optional(z.string()),
      role_id: keyRole(),
      revoked: z.boolean(),
      expires_at: z.optional(z.string()),
      name: z.string(),
      owner_name: z.optional(z.string()),
    }),
  {
    strip: [ttl],
    describe: (item) => (typeof item.key_id === 'string' ? `of key ${item.key_id}` : undefined),
  },
);

/** DynamoDB implementation of the API key port. */
export class DynamoApiKeyRepository extends DynamoRepository implements ApiKeyRepository {
  async create(key: ApiKey): Promise<void> {
    const credential: ApiKeyCredential = {
      key_id: key.id,
      workspace_id: key.workspace_id,
      role_id: key.role_id,
      revoked: false,
      expires_at: key.expires_at,
      name: key.name,
      owner_name: key.owner_name,
    };
    // A key that expires carries the table's TTL on both items (ADR 0093): authentication refuses it
    // at once; the table removes its hash item then and its record after the retention.
    const expiry = apiKeyExpiry(key);
    await transact(this.db, [
      // A key can only be added to an active workspace (see deleteEmpty).
      ...(key.workspace_id
        ? [
            activeCheck(
              this.table,
              keys.workspace(key.workspace_id),
              () => new NotFoundError('workspace_not_found', 'The workspace no longer exists.'),
            ),
          ]
        : []),
      putNew(this.table, {
        ...keys.apiKey(key.workspace_id, key.id),
        entity: entities.apiKey,
        ...key,
        ...(expiry ? { [ttl]: expiry.record } : {}),
      }),
      putNew(this.table, {
        ...keys.apiKeyHash(key.key_hash),
        entity: entities.apiKeyHash,
        ...credential,
        ...(expiry ? { [ttl]: expiry.credential } : {}),
      }),
      ...this.counted(key, undefined, key),
    ]);
  }

  async find(workspaceId: string | undefined, keyId: string): Promise<ApiKey | undefined> {
    const out = await this.get(keys.apiKey(workspaceId, keyId));
    return out ? toApiKey(out) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<ApiKey>> {
    const partition = keys.workspacePartition(workspaceId);
    const page = await queryPrefixPage(this.db, this.table, partition, keys.apiKeyPrefix, limit, cursor);
    return { items: page.items.map(toApiKey), nextCursor: page.nextCursor };
  }

  async revoke(key: ApiKey, now: string, version?: number): Promise<void> {
    const gone = () => new NotFoundError('api_key_not_found', `API key '${key.id}' no longer exists.`);
    const atVersion = version !== undefined;
    const items: GuardedItem[] = [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: keys.apiKey(key.workspace_id, key.id),
            UpdateExpression: 'SET revoked = :t, updated_at = :now, #v = #v + :one',
            // Not revoked yet: the summary's counts move once (ADR 0137), however many revokes race.
            ConditionExpression: `${itemExists} AND (attribute_not_exists(revoked) OR revoked <> :t)${atVersion ? ' AND #v = :v' : ''}`,
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: {
              ':t': true,
              ':now': now,
              ':one': 1,
              ...(atVersion ? { ':v': version } : {}),
            },
          },
        },
        // With a version the failed condition may mean changed as well as gone: the domain decides
        // (412). Without one it means gone, or revoked meanwhile by another request (read below).
        onConditionFailed: atVersion ? concurrentModification('The API key') : () => new RevokedMeanwhile(),
      },
      {
        item: {
          Update: {
            TableName: this.table,
            Key: keys.apiKeyHash(key.key_hash),
            UpdateExpression: 'SET revoked = :t',
            ConditionExpression: itemExists,
            ExpressionAttributeValues: { ':t': true },
          },
        },
        onConditionFailed: gone,
      },
      ...this.counted(key, key, { ...key, revoked: true }),
    ];
    try {
      await transact(this.db, items);
    } catch (error) {
      if (!(error instanceof RevokedMeanwhile)) throw error;
      // Revoking a revoked key changes nothing (the domain's rule); a key gone meanwhile is 404.
      if (!(await this.find(key.workspace_id, key.id))?.revoked) throw gone();
    }
  }

  /** The summary's count change of a workspace key (ADR 0137); global keys are counted nowhere. */
  private counted(key: ApiKey, before: ApiKey | undefined, after: ApiKey | undefined): GuardedItem[] {
    if (!key.workspace_id) return [];
    return summaryChangeOf(
      this.table,
      'api_key',
      { id: key.id, workspace_id: key.workspace_id },
      before,
      after,
    );
  }

  async delete(key: ApiKey): Promise<void> {
    await transact(this.db, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.apiKey(key.workspace_id, key.id),
            // Still revoked and unchanged since it was read: nothing but this delete follows a revoke.
            ConditionExpression: `${itemExists} AND revoked = :t AND #v = :v`,
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: { ':t': true, ':v': key.version },
          },
        },
        onConditionFailed: () =>
          new NotFoundError('api_key_not_found', `API key '${key.id}' no longer exists.`),
      },
      // The hash item may be gone already (an expired key's TTL removes it first; ADR 0093).
      unguarded({ Delete: { TableName: this.table, Key: keys.apiKeyHash(key.key_hash) } }),
      ...this.counted(key, key, undefined),
    ]);
  }

  async findCredentialByHash(hashHex: string): Promise<ApiKeyCredential | undefined> {
    const out = await this.get(keys.apiKeyHash(hashHex));
    return out ? toApiKeyCredential(out) : undefined;
  }
}
