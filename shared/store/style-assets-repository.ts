import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import type { AssetReferences, StyleAsset, StyleAssetRepository } from '#domain/style-assets.ts';
import { decoder, text } from './decode.ts';
import { ConditionFailed, storeCall } from './errors.ts';
import { DynamoRepository, keyCondition, queryInput, queryPage, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { type GuardedItem, putNew, transact, unguarded, workspaceIsActive } from './transactions.ts';

/** Bytes per chunk item: under DynamoDB's 400 KB item limit with room for keys (ADR 0053). */
export const CHUNK_BYTES = 300_000;

/** A style asset from its item: the fields of the domain type only (`z.object` drops the rest). */
export const toAsset = /* @__PURE__ */ decoder<StyleAsset>('style asset', () =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    content_type: text<StyleAsset['content_type']>(),
    size_bytes: z.number(),
    sha256: z.string(),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

const chunkCount = (size: number) => Math.max(1, Math.ceil(size / CHUNK_BYTES));

/**
 * DynamoDB implementation of the style asset port. Metadata at `ASSET#<name>` (with `ref_count`,
 * the styles referencing it, kept by the style repository); bytes in content-addressed chunks
 * `ASSETDATA#<name>#<sha256>#<i>` written and removed in the same transaction as the metadata.
 */
export class DynamoStyleAssetRepository extends DynamoRepository implements StyleAssetRepository {
  async find(workspaceId: string, name: string): Promise<StyleAsset | undefined> {
    const item = await this.get(keys.styleAsset(workspaceId, name));
    return item ? toAsset(item) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<StyleAsset>> {
    const partition = keys.workspacePartition(workspaceId);
    const page = await queryPrefixPage(this.db, this.table, partition, keys.styleAssetPrefix, limit, cursor);
    return { items: page.items.map(toAsset), nextCursor: page.nextCursor };
  }

  private chunks(a: StyleAsset, bytes: Buffer): GuardedItem[] {
    return Array.from({ length: chunkCount(bytes.length) }, (_, i) =>
      unguarded({
        Put: {
          TableName: this.table,
          Item: {
            ...keys.styleAssetChunk(a.workspace_id, a.name, a.sha256, i),
            entity: entities.styleAssetChunk,
            data: bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES),
          },
        },
      }),
    );
  }

  private dropChunks(a: StyleAsset): GuardedItem[] {
    return Array.from({ length: chunkCount(a.size_bytes) }, (_, i) =>
      unguarded({
        Delete: { TableName: this.table, Key: keys.styleAssetChunk(a.workspace_id, a.name, a.sha256, i) },
      }),
    );
  }

  async save(next: StyleAsset, bytes: Buffer, previous?: StyleAsset): Promise<void> {
    const concurrent = () =>
      new StateConflictError('concurrent_modification', 'The asset was changed by another request; retry.');
    if (!previous) {
      await transact(
        this.db,
        [
          workspaceIsActive(this.table, next.workspace_id),
          putNew(
            this.table,
            {
              ...keys.styleAsset(next.workspace_id, next.name),
              entity: entities.styleAsset,
              ...next,
              ref_count: 0,
            },
            concurrent,
          ),
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
      const out = await storeCall(() =>
        this.db.send(
          new BatchGetCommand({ RequestItems: { [this.table]: { Keys: wanted, ConsistentRead: true } } }),
        ),
      );
      // Two chunks of 300 KB fit one BatchGet response (16 MB); anything unprocessed is retried below.
      const items = Object.keys(out.UnprocessedKeys ?? {}).length ? [] : (out.Responses?.[this.table] ?? []);
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

  async remove(asset: StyleAsset): Promise<boolean> {
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
          onConditionFailed: () => new ConditionFailed(),
        },
        ...this.dropChunks(asset),
      ]);
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  async referencesOf(asset: StyleAsset): Promise<AssetReferences | undefined> {
    const current = await this.get(keys.styleAsset(asset.workspace_id, asset.name));
    if (!current) return undefined;
    const count = (current.ref_count as number | undefined) ?? 0;
    if (count <= 0) return { count, styles: [] };
    const refs = await queryPage(
      this.db,
      queryInput(
        this.table,
        keyCondition(keys.workspacePartition(asset.workspace_id), {
          prefix: keys.styleAssetRefPrefix(asset.name),
        }),
        { consistent: true, limit: 1 },
      ),
    );
    return { count, styles: refs.flatMap((r) => (typeof r.style === 'string' ? [r.style] : [])) };
  }
}
