/**
 * The deletion workflow against the table (ADR 0070): the store side of the domain's phase specs
 * (`domain/deletion-phases.ts`) on the chunked-workflow engine (`domain/chunked-workflow.ts`,
 * ADR 0080). Here: where each collection's items are, how they are removed, and what a released
 * reference changes. The operation item's transitions and the checkpoint commit are in
 * `chunk-commits.ts`, the target's final transaction and the group removal in `deletion-targets.ts`.
 */
import { beginAttempt, CorruptItemError, recordFailure, runBatch } from '#domain/chunked-workflow.ts';
import {
  type DeletionCollection,
  type DeletionRun,
  type DeletionWorkflowStore,
  deletionWorkflow,
  type Reference,
  type StoredItem,
} from '#domain/deletion-phases.ts';
import type { LayerGroup } from '#domain/layer-groups.ts';
import type { WorkflowLog } from '#domain/workflow-log.ts';
import type { DeletionWorkflowSteps } from '#domain/workflows.ts';
import { DynamoOperationLedger, prefixChunks, WriteUnits } from './chunk-commits.ts';
import { documentClient, tableName } from './client.ts';
import { countedWorkspaceEntities, dependentGroupClosure } from './deletion-plans.ts';
import { removeGroup, removeService, removeWorkspace } from './deletion-targets.ts';
import { activeDeletionsChange, activeIndexRemoval, toOperation } from './deletions-repository.ts';
import { batchDeleteKeys, batchGetItems } from './items.ts';
import { keyOf, keys } from './keys.ts';
import { DynamoSettingsRepository } from './settings-repository.ts';
import { releaseShard, summaryChangeOnShard } from './summary-counters.ts';
import { attributes, itemExists } from './table.ts';
import type { TransactItem } from './transactions.ts';

// Kept at their old path (the chaos test reads LAYER_CHUNK here).
export { CorruptItemError, StaleExecutionError } from '#domain/chunked-workflow.ts';
export { LAYER_CHUNK } from '#domain/deletion-phases.ts';
export { TransientError } from '#domain/workflows.ts';

/** The domain's deletion store port over the table; one per task invocation (it counts its write units). */
export class DynamoDeletionWorkflowStore
  extends DynamoOperationLedger<DeletionRun>
  implements DeletionWorkflowStore
{
  private readonly settings = new DynamoSettingsRepository();

  constructor() {
    const table = tableName();
    super({
      db: documentClient(),
      table,
      key: (id) => keys.deletion(id),
      read: (item) => toOperation(item) as DeletionRun,
      units: new WriteUnits(),
      // A failed service deletion stops counting as active: its workspace stops waiting for it.
      failureItems: (op) =>
        op.scope === 'service' ? [activeDeletionsChange(table, op.workspace_id, -1).item] : [],
      // Failed is final until a retry: off the sweep's active index in the same write (ADR 0113).
      failureRemoves: activeIndexRemoval,
    });
  }

  private get db() {
    return this.t.db;
  }

  private get table() {
    return this.t.table;
  }

  collection(op: DeletionRun, which: DeletionCollection) {
    const { prefix, remove } = this.where(op, which);
    return prefixChunks<DeletionRun, Reference>({
      ...this.t,
      partition: keys.workspacePartition(op.workspace_id),
      prefix,
      releaseItems: (r, count) => this.releaseItems(op, r as Reference, count),
      remove,
    });
  }

  catalogKind(item: StoredItem): string | undefined {
    return countedWorkspaceEntities[item.entity as string];
  }

  isWorkspaceItem(item: StoredItem): boolean {
    return item.SK === keys.workspaceItemSortKey;
  }

  dependentGroups(op: DeletionRun): Promise<LayerGroup[]> {
    return dependentGroupClosure(this.db, this.table, op.workspace_id, new Set([op.target_id]));
  }

  removeGroup(op: DeletionRun, group: LayerGroup): Promise<boolean> {
    return removeGroup(this.db, this.table, this.t.units, op, group);
  }

  async removeTarget(op: DeletionRun): Promise<void> {
    if (op.scope === 'service') await removeService(this.db, this.table, this.t.units, op);
    else await removeWorkspace(this.db, this.table, this.t.units, op);
  }

  /** Where a collection's items are and how they go. */
  private where(
    op: DeletionRun,
    which: DeletionCollection,
  ): { prefix: string; remove: (items: StoredItem[]) => Promise<number> } {
    const plain = (prefix: string) => ({ prefix, remove: (items: StoredItem[]) => this.deleteItems(items) });
    switch (which) {
      case 'service_layers':
        return { prefix: keys.layerPrefix(op.target_id), remove: (layers) => this.removeLayers(op, layers) };
      case 'workspace_layers':
        return plain(keys.layerPrefixAll);
      case 'mosaic_granules':
        return plain(keys.mosaicGranulePrefix(op.target_id));
      case 'mosaic_harvest_jobs':
        return plain(keys.mosaicHarvestJobPrefix(op.target_id));
      case 'api_keys':
        // The hash lookup first: a key whose hash is gone can't authenticate any more.
        return {
          prefix: keys.apiKeyPrefix,
          remove: async (items) =>
            (await batchDeleteKeys(
              this.db,
              this.table,
              items
                .filter((i) => typeof i.key_hash === 'string')
                .map((i) => keys.apiKeyHash(i.key_hash as string)),
            )) + (await this.deleteItems(items)),
        };
      case 'claim_mappings':
        return plain(keys.claimMappingPrefix);
      case 'settings':
        return plain(keys.settingsPrefix);
      case 'workspace_items':
        return plain(keys.partitionStart);
    }
  }

  /** Deletes items by their own keys (BatchWriteItem); returns the write units. */
  private deleteItems(items: StoredItem[]): Promise<number> {
    return batchDeleteKeys(this.db, this.table, items.map(keyOf));
  }

  /** A service's layers: their public id markers (those still naming them), then the layers. */
  private async removeLayers(op: DeletionRun, layers: StoredItem[]): Promise<number> {
    for (const l of layers) {
      if (typeof l.public_id !== 'string' || typeof l.id !== 'string') {
        throw new CorruptItemError(
          `Layer item ${String(l.SK)} has no public_id; repair or remove it, then retry.`,
        );
      }
    }
    // Markers first, each only while it still names this layer: once a marker is gone its
    // public id may be taken again, and a re-run of this chunk must not delete the new owner's.
    // While a marker names one of these layers nobody else can free it (the service is hidden),
    // so reading first and deleting in batches is as safe as a conditional delete per marker.
    const markers = await batchGetItems(
      this.db,
      this.table,
      [...new Set(layers.map((l) => l.public_id as string))].map((p) => keys.publicId(op.workspace_id, p)),
      { expression: `${attributes.pk}, ${attributes.sk}, target_id` },
    );
    const ids = new Set(layers.map((l) => l.id as string));
    const owned = markers.filter((m) => ids.has(m.target_id as string)).map(keyOf);
    return (await batchDeleteKeys(this.db, this.table, owned)) + (await this.deleteItems(layers));
  }

  /** What releasing a reference `count` times writes. */
  private releaseItems(op: DeletionRun, r: Reference, count: number): TransactItem[] {
    switch (r.kind) {
      case 'style':
        return [
          {
            Update: {
              TableName: this.table,
              Key: keys.style(op.workspace_id, r.style),
              UpdateExpression: 'ADD layer_ref_count :d',
              ConditionExpression: itemExists,
              ExpressionAttributeValues: { ':d': -count },
            },
          },
        ];
      case 'role':
        return [
          {
            Update: {
              TableName: this.table,
              Key: keys.role(r.roleId),
              UpdateExpression: 'ADD ref_count :d',
              ExpressionAttributeValues: { ':d': -count },
            },
          },
        ];
      case 'tile_matrix_set':
        return this.settings.tileMatrixSetReferences(op.workspace_id, r.id, -1).map((g) => g.item);
      case 'summary':
        // Each field on its own shard (one chunk may release both layer states; ADR 0137).
        return summaryChangeOnShard(this.table, op.workspace_id, releaseShard(r.field), {
          [r.field]: -count,
        }).map((g) => g.item);
    }
  }
}

/** The workflow's task steps (the domain port): the engine over the deletion's phases and this store. */
export class DeletionSteps implements DeletionWorkflowSteps {
  private readonly workflow;

  constructor(log?: WorkflowLog) {
    this.workflow = deletionWorkflow(new DynamoDeletionWorkflowStore(), log);
  }

  begin(id: string, attempt: number): Promise<void> {
    return beginAttempt(this.workflow, id, attempt);
  }

  runBatch(id: string, attempt: number, budgetMs: number): Promise<{ done: boolean }> {
    return runBatch(this.workflow, id, attempt, budgetMs);
  }

  recordFailure(id: string, attempt: number, message: string): Promise<void> {
    return recordFailure(this.workflow, id, attempt, message);
  }
}
