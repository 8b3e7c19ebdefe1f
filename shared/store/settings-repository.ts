import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, StateConflictError } from '../domain/errors.ts';
import {
  customTileMatrixSets,
  type OGCTilesSettings,
  type SettingsKind,
  type SettingsKinds,
  type SettingsRepository,
  type Versioned,
} from '../domain/settings.ts';
import { documentClient, tableName } from './client.ts';
import { translateStoreError } from './errors.ts';
import { entities, keys } from './keys.ts';
import { concurrentModification, type GuardedItem, transact, workspaceIsActive } from './transactions.ts';

/**
 * DynamoDB implementation of the settings port: one item per document in the workspace
 * partition. Tiles settings keep a reference record per named custom tile matrix set and bump the
 * set's `ref_count` in the same transaction, so deleting a set can't miss a reference.
 */
export class DynamoSettingsRepository implements SettingsRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async find<K extends SettingsKind>(
    workspaceId: string,
    kind: K,
  ): Promise<Versioned<SettingsKinds[K]> | undefined> {
    try {
      const out = await this.db.send(
        new GetCommand({
          TableName: this.table,
          Key: keys.settings(workspaceId, kind),
          ConsistentRead: true,
        }),
      );
      if (!out.Item) return undefined;
      return { document: out.Item.document as SettingsKinds[K], version: out.Item.version as number };
    } catch (error) {
      translateStoreError(error);
    }
  }

  async missingTileMatrixSets(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    try {
      const out = await this.db.send(
        new BatchGetCommand({
          RequestItems: {
            [this.table]: {
              Keys: ids.map((id) => keys.tileMatrixSet(id)),
              ProjectionExpression: 'id',
              ConsistentRead: true,
            },
          },
        }),
      );
      const found = new Set((out.Responses?.[this.table] ?? []).map((i) => i.id as string));
      return ids.filter((id) => !found.has(id));
    } catch (error) {
      translateStoreError(error);
    }
  }

  /** The reference of a workspace's tiles settings to a tile matrix set: its count and its record. */
  tileMatrixSetReferences(workspaceId: string, id: string, delta: 1 | -1): GuardedItem[] {
    return [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: keys.tileMatrixSet(id),
            UpdateExpression: 'ADD ref_count :d',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeValues: { ':d': delta },
          },
        },
        onConditionFailed: () =>
          new InvalidInputError('unknown_tile_matrix_set', `Tile matrix set '${id}' does not exist.`),
      },
      delta === 1
        ? {
            item: {
              Put: {
                TableName: this.table,
                Item: {
                  ...keys.tileMatrixSetRef(id, workspaceId),
                  entity: entities.tileMatrixSetRef,
                  tile_matrix_set: id,
                  workspace_id: workspaceId,
                },
              },
            },
          }
        : { item: { Delete: { TableName: this.table, Key: keys.tileMatrixSetRef(id, workspaceId) } } },
    ];
  }

  async save<K extends SettingsKind>(
    workspaceId: string,
    kind: K,
    next: Versioned<SettingsKinds[K]>,
    previous: Versioned<SettingsKinds[K]>,
  ): Promise<void> {
    const moves: GuardedItem[] = [];
    if (kind === 'ogc-tiles') {
      const before = new Set(customTileMatrixSets(previous.document as OGCTilesSettings));
      const after = new Set(customTileMatrixSets(next.document as OGCTilesSettings));
      for (const id of after)
        if (!before.has(id)) moves.push(...this.tileMatrixSetReferences(workspaceId, id, 1));
      for (const id of before)
        if (!after.has(id)) moves.push(...this.tileMatrixSetReferences(workspaceId, id, -1));
    }
    await transact(
      this.db,
      [
        workspaceIsActive(this.table, workspaceId),
        {
          item: {
            Put: {
              TableName: this.table,
              Item: {
                ...keys.settings(workspaceId, kind),
                entity: entities.settings,
                kind,
                document: next.document,
                version: next.version,
                updated_at: new Date().toISOString(),
              },
              ...(previous.version === 0
                ? { ConditionExpression: 'attribute_not_exists(PK)' }
                : {
                    ConditionExpression: '#v = :v',
                    ExpressionAttributeNames: { '#v': 'version' },
                    ExpressionAttributeValues: { ':v': previous.version },
                  }),
            },
          },
          onConditionFailed: () =>
            new StateConflictError(
              'concurrent_modification',
              'The settings were changed by another request; retry.',
            ),
        },
        ...moves,
      ],
      concurrentModification('The settings'),
    );
  }
}
