import * as z from 'zod/mini';
import type { DeletionPlan } from '#domain/deletion-model.ts';
import { AlreadyExistsError, StateConflictError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import { customTileMatrixSets, type OGCTilesSettings } from '#domain/settings.ts';
import type { SummaryCounts } from '#domain/workspace-summary.ts';
import type { Workspace, WorkspaceRepository } from '#domain/workspaces.ts';
import { decoder, text } from './decode.ts';
import { planWorkspace } from './deletion-plans.ts';
import { DynamoRepository, keyCondition, queryIndexPage, queryInput, queryPages } from './items.ts';
import { entities, keyOf, keys } from './keys.ts';
import { newWorkspaceSummary, workspaceCounts } from './summary-counters.ts';
import { attributes } from './table.ts';
import {
  concurrentModification,
  type GuardedItem,
  MAX_TRANSACTION_ITEMS,
  putNew,
  transact,
  unguarded,
} from './transactions.ts';

/** A workspace from its item (the fields of the domain type only: `z.object` drops the rest). */
export const toWorkspace = /* @__PURE__ */ decoder<Workspace>('workspace', () =>
  z.object({
    claim_mapping_count: z.optional(z.number()),
    deletion_id: z.optional(z.string()),
    usage_slot: z.optional(z.number()),
    usage_key: z.optional(z.string()),
    id: z.string(),
    name: z.string(),
    description: z.optional(z.string()),
    status: text<Workspace['status']>(),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

function workspaceItem(ws: Workspace) {
  return { ...keys.workspace(ws.id), ...keys.workspaceListing(ws.name), entity: entities.workspace, ...ws };
}

function nameTaken(name: string) {
  return new AlreadyExistsError('workspace_name_taken', `A workspace named '${name}' already exists.`);
}

// One TransactWriteItems holds at most 100 items; the scan stops a little past what fits.
const CHILDREN_SCANNED = 120;

/** DynamoDB implementation of the workspace port. */
export class DynamoWorkspaceRepository extends DynamoRepository implements WorkspaceRepository {
  async create(ws: Workspace): Promise<void> {
    await transact(this.db, [
      putNew(
        this.table,
        { ...keys.workspaceName(ws.name), entity: entities.workspaceName, workspace_id: ws.id },
        () => nameTaken(ws.name),
      ),
      putNew(this.table, workspaceItem(ws)),
      // Its summary's counters start exact, at zero (ADR 0137).
      newWorkspaceSummary(this.table, ws.id),
    ]);
  }

  summaryCounts(workspaceId: string): Promise<SummaryCounts> {
    return workspaceCounts(this.db, this.table, workspaceId);
  }

  async findById(id: string): Promise<Workspace | undefined> {
    const out = await this.get(keys.workspace(id));
    return out ? toWorkspace(out) : undefined;
  }

  async findByName(name: string): Promise<Workspace | undefined> {
    const marker = await this.get(keys.workspaceName(name));
    const id = marker?.workspace_id as string | undefined;
    return id ? this.findById(id) : undefined;
  }

  async list(limit: number, cursor?: string): Promise<Page<Workspace>> {
    const page = await queryIndexPage(
      this.db,
      this.table,
      keys.workspaceListingPartition,
      limit,
      cursor,
      { pk: { prefix: keys.workspacePartitionPrefix }, sk: { equals: keys.workspaceItemSortKey } },
      { filter: { expression: '#s = :active', names: { '#s': 'status' }, values: { ':active': 'active' } } },
    );
    return { items: page.items.map(toWorkspace), nextCursor: page.nextCursor };
  }

  async update(previous: Workspace, next: Workspace): Promise<void> {
    const renamed = previous.name !== next.name;
    const concurrent = concurrentModification('The workspace');
    // An Update, not a Put: counters other writers keep on the item (claim mappings) survive.
    const description = next.description === undefined ? 'REMOVE description' : '';
    await transact(
      this.db,
      [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: keys.workspace(next.id),
              UpdateExpression: `SET #n = :name, ${attributes.gsi1sk} = :name, #v = :next, updated_at = :at${
                next.description === undefined ? '' : ', description = :description'
              } ${description}`.trim(),
              ConditionExpression: '#v = :v AND #s = :active',
              ExpressionAttributeNames: { '#n': 'name', '#v': 'version', '#s': 'status' },
              ExpressionAttributeValues: {
                ':name': next.name,
                ':next': next.version,
                ':at': next.updated_at,
                ':v': previous.version,
                ':active': 'active',
                ...(next.description === undefined ? {} : { ':description': next.description }),
              },
            },
          },
          onConditionFailed: concurrent,
        },
        ...(renamed
          ? [
              putNew(
                this.table,
                { ...keys.workspaceName(next.name), entity: entities.workspaceName, workspace_id: next.id },
                () => nameTaken(next.name),
              ),
              {
                item: {
                  Delete: {
                    TableName: this.table,
                    Key: keys.workspaceName(previous.name),
                    ConditionExpression: 'workspace_id = :id',
                    ExpressionAttributeValues: { ':id': previous.id },
                  },
                },
                onConditionFailed: concurrent,
              },
            ]
          : []),
      ],
      concurrent,
    );
  }

  async deleteEmpty(ws: Workspace): Promise<DeletionPlan | undefined> {
    // Hide the workspace first: from now on no child can be added (children condition on `active`),
    // so the emptiness check below cannot race with a concurrent create.
    const concurrent = () =>
      new StateConflictError(
        'concurrent_modification',
        'The workspace was changed by another request; retry.',
      );
    await transact(
      this.db,
      [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: keys.workspace(ws.id),
              UpdateExpression: 'SET #s = :deleting',
              ConditionExpression: '#v = :v AND #s = :active',
              ExpressionAttributeNames: { '#s': 'status', '#v': 'version' },
              ExpressionAttributeValues: { ':deleting': 'deleting', ':active': 'active', ':v': ws.version },
            },
          },
          onConditionFailed: concurrent,
        },
      ],
      concurrent,
      // Hiding the workspace while it is checked is a lock, not a change (ADR 0094).
      { unaudited: true },
    );
    const children = await this.children(ws.id);
    // Settings are configuration, not catalog: they go with the workspace too.
    const auxiliary = new Set<string>([
      entities.apiKey,
      entities.claimMapping,
      entities.claimMappingTriple,
      entities.settings,
      entities.activeDeletions,
      // Counters a removed service left behind (a layer write racing its removal; ADR 0101).
      entities.planCounter,
      // The imports' quota usage (ADR 0110): the imports themselves decide whether it can go.
      entities.importUsage,
      // The summary's counters (ADR 0137): they count what is here, and go with it.
      entities.summaryCounter,
    ]);
    const blocking = children.filter(
      (c) => !auxiliary.has(c.entity as string) && c.SK !== keys.workspaceItemSortKey,
    );
    // API keys and claim mappings go with the workspace; their side items change in the same transaction.
    const deletes: GuardedItem[] = [];
    const roleReleases = new Map<string, number>();
    for (const c of children) {
      if (!auxiliary.has(c.entity as string)) continue;
      deletes.push(unguarded({ Delete: { TableName: this.table, Key: keyOf(c) } }));
      if (c.entity === entities.apiKey) {
        deletes.push(
          unguarded({ Delete: { TableName: this.table, Key: keys.apiKeyHash(c.key_hash as string) } }),
        );
      }
      if (c.entity === entities.claimMapping && c.custom_role) {
        roleReleases.set(c.role_id as string, (roleReleases.get(c.role_id as string) ?? 0) + 1);
      }
      if (c.entity === entities.settings && c.kind === 'ogc-tiles') {
        // Release the tile matrix sets these tiles settings named (see ADR 0050).
        for (const id of customTileMatrixSets(c.document as OGCTilesSettings)) {
          deletes.push(
            unguarded({ Delete: { TableName: this.table, Key: keys.tileMatrixSetRef(id, ws.id) } }),
          );
          deletes.push(
            unguarded({
              Update: {
                TableName: this.table,
                Key: keys.tileMatrixSet(id),
                UpdateExpression: 'ADD ref_count :minus',
                ExpressionAttributeValues: { ':minus': -1 },
              },
            }),
          );
        }
      }
    }
    for (const [roleId, count] of roleReleases) {
      deletes.push(
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.role(roleId),
            UpdateExpression: 'ADD ref_count :minus',
            ExpressionAttributeValues: { ':minus': -count },
          },
        }),
      );
    }
    if (
      blocking.length > 0 ||
      // Two for the workspace and its name, one for the audit record (ADR 0094).
      deletes.length > MAX_TRANSACTION_ITEMS - 3 ||
      children.length >= CHILDREN_SCANNED
    ) {
      // What it holds, read while it is still hidden (nothing can be added meanwhile): the one
      // account of its contents the refusal reports (ADR 0087).
      const plan = await planWorkspace(this.db, this.table, ws);
      await this.restore(ws);
      return plan;
    }
    await transact(this.db, [
      unguarded({ Delete: { TableName: this.table, Key: keys.workspace(ws.id) } }),
      unguarded({
        Delete: {
          TableName: this.table,
          Key: keys.workspaceName(ws.name),
          ConditionExpression: 'workspace_id = :id',
          ExpressionAttributeValues: { ':id': ws.id },
        },
      }),
      ...deletes,
    ]);
    return undefined;
  }

  /** The first items of a workspace's partition (enough to tell whether it can be deleted at once). */
  private async children(workspaceId: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, keyCondition(keys.workspacePartition(workspaceId)), {
        consistent: true,
        limit: 100,
      }),
      (page) => {
        items.push(...page);
        return items.length < CHILDREN_SCANNED;
      },
    );
    return items;
  }

  private async restore(ws: Workspace): Promise<void> {
    await transact(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.workspace(ws.id),
            UpdateExpression: 'SET #s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':active': 'active' },
          },
        }),
      ],
      undefined,
      { unaudited: true },
    );
  }
}
