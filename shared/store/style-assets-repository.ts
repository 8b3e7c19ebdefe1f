import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DependencyConflictError, NotFoundError, StateConflictError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import type { StyleAsset, StyleAssetRepository } from '../domain/style-assets.ts';
import { documentClient, tableName } from './client.ts';
import { translateStoreError } from './errors.ts';
import { entities, keys } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';
import { type GuardedItem, transact, workspaceIsActive } from './transactions.ts';

/** Bytes per chunk item: under DynamoDB's 400 KB item limit with room for keys (ADR 0053). */
export const CHUNK_BYTES = 300_000;

class AssetConditionFailed extends Error {}

const fields = [
  'id',
  'workspace_id',
  'name',
  'content_type',
  'size_bytes',
  'sha256',
  'version',
  'created_at',
  'updated_at',
] as const;

function toAsset(item: Record<string, unknown>): StyleAsset {
  return Object.fromEntries(fields.map((f) => [f, item[f]])) as unknown as StyleAsset;
}

const chunkCount = (size: number) => Math.max(1, Math.ceil(size / CHUNK_BYTES));

/**
 * DynamoDB implementation of the style asset port. Metadata at `ASSET#<name>` (with `ref_count`,
 * the styles referencing it, kept by the style repository); bytes in content-addressed chunks
 * `ASSETDATA#<name>#<sha256>#<i>` written and removed in the same transaction as the metadata.
 */
export class DynamoStyleAssetRepository implements StyleAssetRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async find(workspaceId: string, name: string): Promise<StyleAsset | undefined> {
    try {
      const out = await this.db.send(
        new GetCommand({
          TableName: this.table,
          Key: keys.styleAsset(workspaceId, name),
          ConsistentRead: true,
        }),
      );
      return out.Item ? toAsset(out.Item) : undefined;
    } catch (error) {
      translateStoreError(error);
    }
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<StyleAsset>> {
    const partition = keys.workspacePartition(workspaceId);
    const start = decodeCursor(cursor, { PK: { equals: partition }, SK: { prefix: keys.styleAssetPrefix } });
    try {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
          ExpressionAttributeValues: { ':p': partition, ':s': keys.styleAssetPrefix },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      return { items: (out.Items ?? []).map(toAsset), nextCursor: encodeCursor(out.LastEvaluatedKey) };
    } catch (error) {
      translateStoreError(error);
    }
  }

  private chunks(a: StyleAsset, bytes: Buffer): GuardedItem[] {
    return Array.from({ length: chunkCount(bytes.length) }, (_, i) => ({
      item: {
        Put: {
          TableName: this.table,
          Item: {
            ...keys.styleAssetChunk(a.workspace_id, a.name, a.sha256, i),
            entity: entities.styleAssetChunk,
            data: bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES),
          },
        },
      },
    }));
  }

  private dropChunks(a: StyleAsset): GuardedItem[] {
    return Array.from({ length: chunkCount(a.size_bytes) }, (_, i) => ({
      item: {
        Delete: { TableName: this.table, Key: keys.styleAssetChunk(a.workspace_id, a.name, a.sha256, i) },
      },
    }));
  }

  async save(next: StyleAsset, bytes: Buffer, previous?: StyleAsset): Promise<void> {
    const concurrent = () =>
      new StateConflictError('concurrent_modification', 'The asset was changed by another request; retry.');
    if (!previous) {
      await transact(
        this.db,
        [
          workspaceIsActive(this.table, next.workspace_id),
          {
            item: {
              Put: {
                TableName: this.table,
                Item: {
                  ...keys.styleAsset(next.workspace_id, next.name),
                  entity: entities.styleAsset,
                  ...next,
                  ref_count: 0,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            onConditionFailed: concurrent,
          },
          ...this.chunks(next, bytes),
        ],
        concurrent,
      );
      return;
    }
    const sameBytes = previous.sha256 === next.sha256;
    await transact(
      this.db,
      [
        {
          item: {
            // An UpdateItem keeps `ref_count`, which style saves change.
            Update: {
              TableName: this.table,
              Key: keys.styleAsset(next.workspace_id, next.name),
              UpdateExpression:
                'SET content_type = :t, size_bytes = :s, sha256 = :h, #v = :v, updated_at = :u',
              ConditionExpression: '#v = :prev',
              ExpressionAttributeNames: { '#v': 'version' },
              ExpressionAttributeValues: {
                ':t': next.content_type,
                ':s': next.size_bytes,
                ':h': next.sha256,
                ':v': next.version,
                ':u': next.updated_at,
                ':prev': previous.version,
              },
            },
          },
          onConditionFailed: concurrent,
        },
        ...(sameBytes ? [] : [...this.chunks(next, bytes), ...this.dropChunks(previous)]),
      ],
      concurrent,
    );
  }

  async read(asset: StyleAsset): Promise<{ asset: StyleAsset; bytes: Buffer }> {
    let current = asset;
    for (let attempt = 0; attempt < 3; attempt++) {
      const wanted = Array.from({ length: chunkCount(current.size_bytes) }, (_, i) =>
        keys.styleAssetChunk(current.workspace_id, current.name, current.sha256, i),
      );
      let items: Record<string, unknown>[];
      try {
        const out = await this.db.send(
          new BatchGetCommand({ RequestItems: { [this.table]: { Keys: wanted, ConsistentRead: true } } }),
        );
        items = out.Responses?.[this.table] ?? [];
        // Two chunks of 300 KB fit one BatchGet response (16 MB); anything unprocessed is retried below.
        if (Object.keys(out.UnprocessedKeys ?? {}).length) items = [];
      } catch (error) {
        translateStoreError(error);
      }
      const bySk = new Map(items.map((i) => [i.SK as string, i.data as Uint8Array]));
      const parts = wanted.map((k) => bySk.get(k.SK));
      if (parts.every((p) => p !== undefined)) {
        return { asset: current, bytes: Buffer.concat(parts.map((p) => Buffer.from(p as Uint8Array))) };
      }
      // A replace or delete won the race between the metadata and the chunks: read again.
      const again = await this.find(current.workspace_id, current.name);
      if (!again)
        throw new NotFoundError('style_asset_not_found', `Style asset '${current.name}' does not exist.`);
      current = again;
    }
    throw new StateConflictError('concurrent_modification', 'The asset keeps changing; retry.');
  }

  async delete(asset: StyleAsset): Promise<void> {
    try {
      await transact(this.db, [
        {
          item: {
            Delete: {
              TableName: this.table,
              Key: keys.styleAsset(asset.workspace_id, asset.name),
              ConditionExpression: '#v = :v AND (attribute_not_exists(ref_count) OR ref_count <= :zero)',
              ExpressionAttributeNames: { '#v': 'version' },
              ExpressionAttributeValues: { ':v': asset.version, ':zero': 0 },
            },
          },
          onConditionFailed: () => new AssetConditionFailed(),
        },
        ...this.dropChunks(asset),
      ]);
    } catch (error) {
      if (!(error instanceof AssetConditionFailed)) throw error;
      await this.explain(asset);
    }
  }

  private async explain(asset: StyleAsset): Promise<never> {
    try {
      const out = await this.db.send(
        new GetCommand({
          TableName: this.table,
          Key: keys.styleAsset(asset.workspace_id, asset.name),
          ConsistentRead: true,
        }),
      );
      if (!out.Item)
        throw new NotFoundError('style_asset_not_found', `Style asset '${asset.name}' does not exist.`);
      if (((out.Item.ref_count as number | undefined) ?? 0) > 0) {
        const refs = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
            ExpressionAttributeValues: {
              ':p': keys.workspacePartition(asset.workspace_id),
              ':s': keys.styleAssetRefPrefix(asset.name),
            },
            ConsistentRead: true,
            Limit: 1,
          }),
        );
        const style = (refs.Items?.[0]?.style as string | undefined) ?? 'another style';
        throw new DependencyConflictError(
          'asset_referenced',
          `Style asset '${asset.name}' is referenced by style ${style}.`,
          { style },
        );
      }
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof DependencyConflictError) throw error;
      translateStoreError(error);
    }
    throw new StateConflictError(
      'concurrent_modification',
      'The asset was changed by another request; retry.',
    );
  }
}
