import { StateConflictError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import type {
  TileMatrixSetDefinition,
  TileMatrixSetRecord,
  TileMatrixSetReferences,
  TileMatrixSetRepository,
} from '#domain/tile-matrix-sets.ts';
import { ConditionFailed } from './errors.ts';
import {
  batchGetItems,
  DynamoRepository,
  keyCondition,
  queryIndexPage,
  queryInput,
  queryPage,
} from './items.ts';
import { entities, keys } from './keys.ts';
import { putNew, transact } from './transactions.ts';

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
export class DynamoTileMatrixSetRepository extends DynamoRepository implements TileMatrixSetRepository {
  async find(id: string): Promise<TileMatrixSetRecord | undefined> {
    const item = await this.get(keys.tileMatrixSet(id));
    return item ? toRecord(item) : undefined;
  }

  async list(limit: number, cursor?: string): Promise<Page<TileMatrixSetRecord>> {
    const page = await queryIndexPage(
      this.db,
      this.table,
      keys.tileMatrixSetListingPartition,
      limit,
      cursor,
      {
        pk: true,
        sk: { equals: keys.tileMatrixSetSortKey },
      },
    );
    return { items: page.items.map(toRecord), nextCursor: page.nextCursor };
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
          putNew(
            this.table,
            {
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
            concurrent,
          ),
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

  async delete(record: TileMatrixSetRecord): Promise<boolean> {
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
          onConditionFailed: () => new ConditionFailed(),
        },
      ]);
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  async referencesOf(record: TileMatrixSetRecord): Promise<TileMatrixSetReferences | undefined> {
    const current = await this.get(keys.tileMatrixSet(record.id));
    if (!current) return undefined;
    const count = (current.ref_count as number | undefined) ?? 0;
    return { count, workspaces: count > 0 ? await this.referencingWorkspaces(record.id) : [] };
  }

  /** Names of the workspaces whose tiles settings reference the set (at most 25 are named). */
  private async referencingWorkspaces(id: string): Promise<string[]> {
    const refs = await queryPage(
      this.db,
      queryInput(
        this.table,
        keyCondition(keys.tileMatrixSetPartition(id), { prefix: keys.tileMatrixSetRefPrefix }),
        {
          consistent: true,
          limit: 25,
        },
      ),
    );
    const ids = refs.map((i) => i.workspace_id as string);
    if (ids.length === 0) return [];
    const workspaces = await batchGetItems(
      this.db,
      this.table,
      ids.map((w) => keys.workspace(w)),
      { expression: '#n, id', names: { '#n': 'name' } },
      false,
    );
    const byId = new Map(workspaces.map((w) => [w.id as string, w.name as string]));
    return ids.map((w) => byId.get(w) ?? w).sort();
  }
}
