import { InvalidInputError } from '#domain/errors.ts';
import {
  customTileMatrixSets,
  type OGCTilesSettings,
  type SettingsKind,
  type SettingsKinds,
  type SettingsRepository,
  type Versioned,
} from '#domain/settings.ts';
import { batchGetItems, DynamoRepository } from './items.ts';
import { entities, keys } from './keys.ts';
import { itemAbsent, itemExists } from './table.ts';
import {
  concurrentModification,
  type GuardedItem,
  transact,
  versionIs,
  workspaceIsActive,
} from './transactions.ts';

/**
 * DynamoDB implementation of the settings port: one item per document in the workspace
 * partition. Tiles settings keep a reference record per named custom tile matrix set and bump the
 * set's `ref_count` in the same transaction, so deleting a set can't miss a reference.
 */
export class DynamoSettingsRepository extends DynamoRepository implements SettingsRepository {
  async find<K extends SettingsKind>(
    workspaceId: string,
    kind: K,
  ): Promise<Versioned<SettingsKinds[K]> | undefined> {
    const item = await this.get(keys.settings(workspaceId, kind));
    if (!item) return undefined;
    return { document: item.document as SettingsKinds[K], version: item.version as number };
  }

  async missingTileMatrixSets(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const items = await batchGetItems(
      this.db,
      this.table,
      ids.map((id) => keys.tileMatrixSet(id)),
      { expression: 'id' },
    );
    const found = new Set(items.map((i) => i.id as string));
    return ids.filter((id) => !found.has(id));
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
            ConditionExpression: itemExists,
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
                ? { ConditionExpression: itemAbsent }
                : {
                    ...versionIs(previous.version),
                  }),
            },
          },
          onConditionFailed: concurrentModification('The settings'),
        },
        ...moves,
      ],
      concurrentModification('The settings'),
    );
  }
}
