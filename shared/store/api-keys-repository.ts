import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiKey, ApiKeyCredential, ApiKeyRepository } from '../domain/api-keys.ts';
import { NotFoundError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import { documentClient, tableName } from './client.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { getItem, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';

const keyFields = [
  'id',
  'workspace_id',
  'name',
  'role_id',
  'key_prefix',
  'key_hash',
  'revoked',
  'expires_at',
  'owner_email',
  'owner_name',
  'version',
  'created_at',
  'updated_at',
] as const;

function toApiKey(item: Record<string, unknown>): ApiKey {
  const out: Record<string, unknown> = {};
  for (const f of keyFields) if (item[f] !== undefined) out[f] = item[f];
  return out as unknown as ApiKey;
}

/** DynamoDB implementation of the API key port. */
export class DynamoApiKeyRepository implements ApiKeyRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async create(key: ApiKey, usageKey?: string): Promise<void> {
    const credential: ApiKeyCredential = {
      key_id: key.id,
      workspace_id: key.workspace_id,
      role_id: key.role_id,
      revoked: false,
      expires_at: key.expires_at,
      name: key.name,
      owner_name: key.owner_name,
      ...(usageKey ? { usage_key: usageKey } : {}),
    };
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            ...(key.workspace_id
              ? [
                  {
                    // A key can only be added to an active workspace (see deleteEmpty).
                    ConditionCheck: {
                      TableName: this.table,
                      Key: keys.workspace(key.workspace_id),
                      ConditionExpression: '#s = :active',
                      ExpressionAttributeNames: { '#s': 'status' },
                      ExpressionAttributeValues: { ':active': 'active' },
                    },
                  },
                ]
              : []),
            {
              Put: {
                TableName: this.table,
                Item: { ...keys.apiKey(key.workspace_id, key.id), entity: entities.apiKey, ...key },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Put: {
                TableName: this.table,
                Item: { ...keys.apiKeyHash(key.key_hash), entity: entities.apiKeyHash, ...credential },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (key.workspace_id && cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') {
        throw new NotFoundError('workspace_not_found', 'The workspace no longer exists.');
      }
      translateStoreError(error);
    }
  }

  async find(workspaceId: string | undefined, keyId: string): Promise<ApiKey | undefined> {
    const out = await getItem(this.db, this.table, keys.apiKey(workspaceId, keyId));
    return out ? toApiKey(out) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<ApiKey>> {
    const partition = keys.workspacePartition(workspaceId);
    const page = await queryPrefixPage(this.db, this.table, partition, keys.apiKeyPrefix, limit, cursor);
    return { items: page.items.map(toApiKey), nextCursor: page.nextCursor };
  }

  async revoke(key: ApiKey, now: string): Promise<void> {
    const set = {
      UpdateExpression: 'SET revoked = :t, updated_at = :now, #v = #v + :one',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#v': 'version' },
      ExpressionAttributeValues: { ':t': true, ':now': now, ':one': 1 },
    };
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName: this.table, Key: keys.apiKey(key.workspace_id, key.id), ...set } },
            {
              Update: {
                TableName: this.table,
                Key: keys.apiKeyHash(key.key_hash),
                UpdateExpression: 'SET revoked = :t',
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeValues: { ':t': true },
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) {
        throw new NotFoundError('api_key_not_found', `API key '${key.id}' no longer exists.`);
      }
      translateStoreError(error);
    }
  }

  async findCredentialByHash(hashHex: string): Promise<ApiKeyCredential | undefined> {
    const out = await getItem(this.db, this.table, keys.apiKeyHash(hashHex));
    if (!out) return undefined;
    const { PK: _pk, SK: _sk, entity: _e, ...credential } = out;
    return credential as unknown as ApiKeyCredential;
  }
}
