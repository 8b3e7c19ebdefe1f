import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DependencyConflictError, NotFoundError, StateConflictError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import type {
  TileMatrixSetDefinition,
  TileMatrixSetRecord,
  TileMatrixSetRepository,
} from '../domain/tile-matrix-sets.ts';
import { documentClient, tableName } from './client.ts';
import { translateStoreError } from './errors.ts';
import { entities, keys } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';
import { transact } from './transactions.ts';

function toRecord(item: Record<string, unknown>): TileMatrixSetRecord {
  return {
    id: item.id as string,
    built_in: false,
    definition: JSON.parse(item.definition as string) as TileMatrixSetDefinition,
    revision: item.revision as number,
    digest: item.digest as string,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/**
 * DynamoDB implementation of the tile matrix set port. A set's item counts the workspaces whose
 * tiles settings name it (`ref_count`, maintained by the settings repository in the same
 * transaction as the settings), so a delete conditioned on `ref_count = 0` can't miss one.
 */
export class DynamoTileMatrixSetRepository implements TileMatrixSetRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async find(id: string): Promise<TileMatrixSetRecord | undefined> {
    try {
      const out = await this.db.send(
        new GetCommand({ TableName: this.table, Key: keys.tileMatrixSet(id), ConsistentRead: true }),
      );
      return out.Item ? toRecord(out.Item) : undefined;
    } catch (error) {
      translateStoreError(error);
    }
  }

  async list(limit: number, cursor?: string): Promise<Page<TileMatrixSetRecord>> {
    const partition = keys.tileMatrixSetListingPartition;
    const start = decodeCursor(cursor, {
      PK: true,
      SK: { equals: 'TMS' },
      GSI1PK: { equals: partition },
      GSI1SK: true,
    });
    try {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :p',
          ExpressionAttributeValues: { ':p': partition },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      return { items: (out.Items ?? []).map(toRecord), nextCursor: encodeCursor(out.LastEvaluatedKey) };
    } catch (error) {
      translateStoreError(error);
    }
  }

  async save(next: TileMatrixSetRecord, previous?: TileMatrixSetRecord): Promise<void> {
    const concurrent = () =>
      new StateConflictError(
        'concurrent_modification',
        'The tile matrix set was changed by another request; retry.',
      );
    if (!previous) {
      await transact(
        this.db,
        [
          {
            item: {
              Put: {
                TableName: this.table,
                Item: {
                  ...keys.tileMatrixSet(next.id),
                  ...keys.tileMatrixSetListing(next.id),
                  entity: entities.tileMatrixSet,
                  id: next.id,
                  definition: JSON.stringify(next.definition),
                  revision: next.revision,
                  digest: next.digest,
                  ref_count: 0,
                  created_at: next.created_at,
                  updated_at: next.updated_at,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            onConditionFailed: concurrent,
          },
        ],
        concurrent,
      );
      return;
    }
    // An update keeps `ref_count`, which settings transactions may change meanwhile.
    await transact(
      this.db,
      [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: keys.tileMatrixSet(next.id),
              UpdateExpression: 'SET #d = :d, revision = :r, digest = :g, updated_at = :u',
              ConditionExpression: 'revision = :prev',
              ExpressionAttributeNames: { '#d': 'definition' },
              ExpressionAttributeValues: {
                ':d': JSON.stringify(next.definition),
                ':r': next.revision,
                ':g': next.digest,
                ':u': next.updated_at,
                ':prev': previous.revision,
              },
            },
          },
          onConditionFailed: concurrent,
        },
      ],
      concurrent,
    );
  }

  async delete(record: TileMatrixSetRecord): Promise<void> {
    try {
      await transact(this.db, [
        {
          item: {
            Delete: {
              TableName: this.table,
              Key: keys.tileMatrixSet(record.id),
              ConditionExpression:
                'revision = :r AND (attribute_not_exists(ref_count) OR ref_count <= :zero)',
              ExpressionAttributeValues: { ':r': record.revision, ':zero': 0 },
            },
          },
          onConditionFailed: () => new StateConflictError('condition_failed', 'condition failed'),
        },
      ]);
    } catch (error) {
      if (!(error instanceof StateConflictError)) throw error;
      // Tell apart the three reasons the condition can fail.
      const out = await this.db
        .send(
          new GetCommand({ TableName: this.table, Key: keys.tileMatrixSet(record.id), ConsistentRead: true }),
        )
        .catch(translateStoreError);
      if (!out.Item)
        throw new NotFoundError(
          'tile_matrix_set_not_found',
          `Tile matrix set '${record.id}' does not exist.`,
        );
      if (((out.Item.ref_count as number | undefined) ?? 0) > 0) {
        const names = await this.referencingWorkspaces(record.id);
        throw new DependencyConflictError(
          'tile_matrix_set_referenced',
          `Tile matrix set '${record.id}' is referenced by the tiles settings of workspaces: ${names.join(', ')}.`,
          { workspaces: names },
        );
      }
      throw new StateConflictError(
        'concurrent_modification',
        'The tile matrix set was changed by another request; retry.',
      );
    }
  }

  /** Names of the workspaces whose tiles settings reference the set (at most 25 are named). */
  private async referencingWorkspaces(id: string): Promise<string[]> {
    try {
      const refs = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
          ExpressionAttributeValues: {
            ':p': keys.tileMatrixSetPartition(id),
            ':s': keys.tileMatrixSetRefPrefix,
          },
          ConsistentRead: true,
          Limit: 25,
        }),
      );
      const ids = (refs.Items ?? []).map((i) => i.workspace_id as string);
      if (ids.length === 0) return [];
      const out = await this.db.send(
        new BatchGetCommand({
          RequestItems: {
            [this.table]: {
              Keys: ids.map((w) => keys.workspace(w)),
              ProjectionExpression: '#n, id',
              ExpressionAttributeNames: { '#n': 'name' },
            },
          },
        }),
      );
      const byId = new Map(
        (out.Responses?.[this.table] ?? []).map((w) => [w.id as string, w.name as string]),
      );
      return ids.map((w) => byId.get(w) ?? w).sort();
    } catch (error) {
      translateStoreError(error);
    }
  }
}
