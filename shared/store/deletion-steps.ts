import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeletionOperation, DeletionPhase } from '../domain/deletions.ts';
import { servicePhases, workspacePhases } from '../domain/deletions.ts';
import { UnavailableError } from '../domain/errors.ts';
import type { LayerGroup } from '../domain/layer-groups.ts';
import { customRoles, usedStyles } from '../domain/layers.ts';
import { customTileMatrixSets, type OGCTilesSettings } from '../domain/settings.ts';
import type { UsageKeyProvisioner } from '../domain/usage-keys.ts';
import { TransientError } from '../domain/workflows.ts';
import { countedWorkspaceEntities, dependentGroupClosure } from './deletion-plans.ts';
import { activeDeletionsChange, toOperation } from './deletions-repository.ts';
import { ConditionFailed, conditionalWrite, storeCall } from './errors.ts';
import {
  batchDeleteKeys,
  batchGetItems,
  DynamoRepository,
  keyCondition,
  queryInput,
  queryPage,
  queryPages,
  writeUnits,
} from './items.ts';
import { keyOf, keys } from './keys.ts';
import { DynamoLayerGroupRepository } from './layer-groups-repository.ts';
import { DynamoSettingsRepository } from './settings-repository.ts';
import { attributes, itemExists } from './table.ts';
import { type TransactItem, transact, unguarded } from './transactions.ts';

type Item = Record<string, unknown>;

export { TransientError };

/** The operation is not running under this execution any more (failed, retried or completed elsewhere). */
export class StaleExecutionError extends Error {
  override name = 'StaleExecutionError';
}

/** An item the workflow can't interpret; the operation fails with this message until it is repaired. */
export class CorruptItemError extends Error {
  override name = 'CorruptItemError';
}

/** Layers per checkpoint of a service deletion (ADR 0070). */
export const LAYER_CHUNK = 1000;

/** Reference changes per checkpoint transaction (DynamoDB allows 100 items; one is the operation). */
const MAX_RELEASES = 90;

/** How one chunked phase reads, releases and removes its items (ADR 0070). */
interface ChunkSpec {
  prefix: string;
  /** Items per checkpoint (fewer when their reference changes would overflow a transaction). */
  chunk: number;
  skip?: (item: Item) => boolean;
  /** Reference changes committed with the checkpoint, keyed so equal changes merge. */
  releases?: (item: Item) => { key: string; item: TransactItem; delta?: number }[];
  counted: (item: Item) => boolean;
  /** Deletes the items (idempotent); returns write units consumed. */
  remove: (items: Item[]) => Promise<number>;
}

/**
 * The steps of the deletion workflow against the table. Every step is idempotent: the operation
 * item records the phase and a checkpoint (the key range of the chunk whose reference changes are
 * committed), so a re-run finishes that chunk's removal and goes on after it.
 */
export class DeletionSteps extends DynamoRepository {
  private readonly groups = new DynamoLayerGroupRepository();
  private readonly settingsStore = new DynamoSettingsRepository();
  /** Write units consumed since the last operation update (added at the next one). */
  private pendingUnits = 0;

  constructor(private readonly usageKeys?: UsageKeyProvisioner) {
    super();
  }

  private async load(
    id: string,
  ): Promise<DeletionOperation & { checkpoint_from?: string; checkpoint_to?: string }> {
    const item = await this.get(keys.deletion(id));
    if (!item) throw new StaleExecutionError(`Deletion operation ${id} does not exist.`);
    return toOperation(item) as DeletionOperation & { checkpoint_from?: string; checkpoint_to?: string };
  }

  /** Runs store calls (already translated) so that an outage is a TransientError, retried by the workflow. */
  private async send<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof UnavailableError) throw new TransientError(error.message);
      throw error;
    }
  }

  /**
   * pending|running → running for this attempt. A completed operation is left alone; a failed one,
   * or one retried since (a newer attempt), makes this execution stale.
   */
  async begin(id: string, attempt: number, now = new Date()): Promise<void> {
    const begun = await this.send(() =>
      conditionalWrite(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: keys.deletion(id),
            UpdateExpression: 'SET #s = :running, updated_at = :now',
            ConditionExpression: '#s IN (:pending, :running) AND attempt_count = :attempt',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':running': 'running',
              ':pending': 'pending',
              ':attempt': attempt,
              ':now': now.toISOString(),
            },
          }),
        ),
      ),
    );
    if (!begun) {
      const op = await this.load(id);
      if (op.status !== 'completed') {
        throw new StaleExecutionError(
          `Deletion ${id} is ${op.status} (attempt ${op.attempt_count}, not ${attempt}).`,
        );
      }
    }
  }

  /** Runs phases until the operation is done or the time budget is spent. */
  async runBatch(id: string, attempt: number, budgetMs: number): Promise<{ done: boolean }> {
    const deadline = Date.now() + budgetMs;
    let op = await this.load(id);
    if (op.status === 'completed') return { done: true };
    if (op.status !== 'running' || op.attempt_count !== attempt) {
      throw new StaleExecutionError(
        `Deletion ${id} is ${op.status} (attempt ${op.attempt_count}, not ${attempt}).`,
      );
    }
    while (Date.now() < deadline) {
      if (op.phase === 'done') return { done: true };
      const finished = await this.runPhase(op, deadline);
      if (!finished) break;
      op = await this.load(id);
    }
    await this.flushUnits(id);
    return { done: op.phase === 'done' };
  }

  private nextPhase(op: DeletionOperation): DeletionPhase {
    const phases = op.scope === 'service' ? servicePhases : workspacePhases;
    return phases[phases.indexOf(op.phase) + 1] ?? 'done';
  }

  private async advance(op: DeletionOperation): Promise<void> {
    const units = this.takeUnits();
    await this.send(() =>
      storeCall(
        () =>
          this.db.send(
            new UpdateCommand({
              TableName: this.table,
              Key: keys.deletion(op.id),
              UpdateExpression:
                'SET phase = :next, updated_at = :now, write_units = if_not_exists(write_units, :zero) + :w REMOVE checkpoint_from, checkpoint_to',
              ConditionExpression: 'phase = :phase AND #s = :running',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':next': this.nextPhase(op),
                ':phase': op.phase,
                ':running': 'running',
                ':now': new Date().toISOString(),
                ':zero': 0,
                ':w': units,
              },
            }),
          ),
        { onConditionFailed: () => new TransientError('Another runner advanced this deletion; resuming.') },
      ),
    );
  }

  /** Adds the write units not yet recorded to the operation (before a batch hands back). */
  private async flushUnits(id: string): Promise<void> {
    const units = this.takeUnits();
    if (units === 0) return;
    await this.send(() =>
      storeCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: keys.deletion(id),
            UpdateExpression: 'SET write_units = if_not_exists(write_units, :zero) + :w',
            ConditionExpression: itemExists,
            ExpressionAttributeValues: { ':zero': 0, ':w': units },
          }),
        ),
      ),
    );
  }

  private takeUnits(): number {
    const units = this.pendingUnits;
    this.pendingUnits = 0;
    return units;
  }

  /** Runs one phase; true when it finished (and the operation moved on). */
  private async runPhase(op: DeletionOperation, deadline: number): Promise<boolean> {
    const ws = op.workspace_id;
    switch (op.phase) {
      case 'layer_groups':
        if (!(await this.removeGroups(op, deadline))) return false;
        break;
      case 'layers':
        if (
          !(await this.chunked(
            op,
            deadline,
            op.scope === 'service' ? this.serviceLayers(op) : this.workspaceLayers(),
          ))
        )
          return false;
        break;
      case 'mosaic':
        if (
          !(await this.chunked(
            op,
            deadline,
            this.plain(keys.mosaicGranulePrefix(op.target_id), 500, () => true),
          ))
        )
          return false;
        break;
      case 'api_keys':
        if (!(await this.chunked(op, deadline, this.apiKeys()))) return false;
        break;
      case 'claim_mappings':
        if (!(await this.chunked(op, deadline, this.claimMappings()))) return false;
        break;
      case 'settings':
        if (!(await this.chunked(op, deadline, this.settings(ws)))) return false;
        break;
      case 'workspace_items':
        if (!(await this.chunked(op, deadline, this.workspaceItems()))) return false;
        break;
      case 'target':
        await (op.scope === 'service' ? this.removeService(op) : this.removeWorkspace(op));
        return true;
      case 'done':
        return true;
    }
    await this.advance(op);
    return true;
  }

  // ---- chunked phases -------------------------------------------------------------------------

  /** The items of a committed chunk still present (its removal may have been interrupted). */
  private async itemsBetween(partition: string, from: string, to: string): Promise<Item[]> {
    const items: Item[] = [];
    await this.send(() =>
      queryPages(
        this.db,
        queryInput(this.table, keyCondition(partition, { from, to }), { consistent: true }),
        (page) => {
          items.push(...page);
          return true;
        },
      ),
    );
    return items;
  }

  private async chunked(
    op: DeletionOperation & { checkpoint_from?: string; checkpoint_to?: string },
    deadline: number,
    spec: ChunkSpec,
  ): Promise<boolean> {
    const partition = keys.workspacePartition(op.workspace_id);
    let previous = op.checkpoint_to;
    if (op.checkpoint_from && op.checkpoint_to) {
      const leftover = (await this.itemsBetween(partition, op.checkpoint_from, op.checkpoint_to)).filter(
        (i) => (i.SK as string).startsWith(spec.prefix) && !spec.skip?.(i),
      );
      if (leftover.length > 0) this.pendingUnits += await spec.remove(leftover);
    }
    while (Date.now() < deadline) {
      const page = await this.send(() =>
        queryPage(
          this.db,
          queryInput(this.table, keyCondition(partition, { prefix: spec.prefix }), {
            consistent: true,
            limit: spec.chunk,
          }),
          previous ? { [attributes.pk]: partition, [attributes.sk]: previous } : undefined,
        ),
      );
      if (page.length === 0) return true;
      // Cut the chunk where its reference changes would overflow one transaction.
      const releases = new Map<string, { item: TransactItem; delta?: number }>();
      const chunk: Item[] = [];
      for (const item of page) {
        const changes = spec.skip?.(item) ? [] : (spec.releases?.(item) ?? []);
        const fresh = changes.filter((c) => !releases.has(c.key)).length;
        if (chunk.length > 0 && releases.size + fresh > MAX_RELEASES) break;
        for (const c of changes) {
          const known = releases.get(c.key);
          if (known?.delta !== undefined) known.delta += c.delta ?? 0;
          else if (!known) releases.set(c.key, { item: c.item, delta: c.delta });
        }
        chunk.push(item);
      }
      const targets = chunk.filter((i) => !spec.skip?.(i));
      const from = chunk[0]?.SK as string;
      const to = chunk[chunk.length - 1]?.SK as string;
      await this.checkpoint(op, previous, from, to, targets.filter(spec.counted).length, [
        ...releases.values(),
      ]);
      if (targets.length > 0) this.pendingUnits += await spec.remove(targets);
      previous = to;
      op.checkpoint_from = from;
      op.checkpoint_to = to;
    }
    return false;
  }

  /** Commits a chunk: its key range, its count and its reference changes, in one write. */
  private async checkpoint(
    op: DeletionOperation,
    previous: string | undefined,
    from: string,
    to: string,
    counted: number,
    releases: { item: TransactItem; delta?: number }[],
  ): Promise<void> {
    const update = {
      TableName: this.table,
      Key: keys.deletion(op.id),
      UpdateExpression:
        'SET checkpoint_from = :from, checkpoint_to = :to, updated_at = :now, progress.deleted = progress.deleted + :n, write_units = if_not_exists(write_units, :zero) + :w',
      ConditionExpression: `phase = :phase AND #s = :running AND ${previous ? 'checkpoint_to = :prev' : 'attribute_not_exists(checkpoint_to)'}`,
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: {
        ':from': from,
        ':to': to,
        ':now': new Date().toISOString(),
        ':n': counted,
        ':zero': 0,
        ':w': this.takeUnits(),
        ':phase': op.phase,
        ':running': 'running',
        ...(previous ? { ':prev': previous } : {}),
      },
    };
    const movedOn = () =>
      new TransientError('Another runner moved this deletion on; resuming from its checkpoint.');
    if (releases.length === 0) {
      const out = await this.send(() =>
        storeCall(() => this.db.send(new UpdateCommand({ ...update, ReturnConsumedCapacity: 'TOTAL' })), {
          onConditionFailed: movedOn,
        }),
      );
      this.pendingUnits += writeUnits(out);
      return;
    }
    const items = releases.map((r) => unguarded(r.delta === undefined ? r.item : withDelta(r.item, r.delta)));
    const out = await this.send(() =>
      transact(this.db, [unguarded({ Update: update }), ...items], undefined, {
        consumedCapacity: true,
        onCancelled: (codes) =>
          codes[0] === 'ConditionalCheckFailed'
            ? movedOn()
            : new TransientError('The checkpoint transaction was cancelled; retrying.'),
      }),
    );
    this.pendingUnits += writeUnits(out);
  }

  /** Deletes items by their own keys (BatchWriteItem); returns the write units. */
  private deleteItems(items: Item[]): Promise<number> {
    return batchDeleteKeys(this.db, this.table, items.map(keyOf));
  }

  private plain(prefix: string, chunk: number, counted: (i: Item) => boolean): ChunkSpec {
    return { prefix, chunk, counted, remove: (items) => this.deleteItems(items) };
  }

  private roleRelease(roleId: string) {
    return {
      key: `role:${roleId}`,
      delta: -1,
      item: {
        Update: {
          TableName: this.table,
          Key: keys.role(roleId),
          UpdateExpression: 'ADD ref_count :d',
          ExpressionAttributeValues: { ':d': 0 },
        },
      },
    };
  }

  private serviceLayers(op: DeletionOperation): ChunkSpec {
    return {
      prefix: keys.layerPrefix(op.target_id),
      chunk: LAYER_CHUNK,
      counted: () => true,
      releases: (l) => [
        ...usedStyles(l as never).map((style) => ({
          key: `style:${style}`,
          delta: -1,
          item: {
            Update: {
              TableName: this.table,
              Key: keys.style(op.workspace_id, style),
              UpdateExpression: 'ADD layer_ref_count :d',
              ConditionExpression: itemExists,
              ExpressionAttributeValues: { ':d': 0 },
            },
          },
        })),
        ...customRoles((l.allowed_roles as string[] | undefined) ?? []).map((r) => this.roleRelease(r)),
      ],
      remove: async (layers) => {
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
          [...new Set(layers.map((l) => l.public_id as string))].map((p) =>
            keys.publicId(op.workspace_id, p),
          ),
          { expression: `${attributes.pk}, ${attributes.sk}, target_id` },
        );
        const ids = new Set(layers.map((l) => l.id as string));
        const owned = markers.filter((m) => ids.has(m.target_id as string)).map(keyOf);
        return (await batchDeleteKeys(this.db, this.table, owned)) + (await this.deleteItems(layers));
      },
    };
  }

  private workspaceLayers(): ChunkSpec {
    return {
      ...this.plain(keys.layerPrefixAll, 500, () => true),
      releases: (l) =>
        customRoles((l.allowed_roles as string[] | undefined) ?? []).map((r) => this.roleRelease(r)),
    };
  }

  private apiKeys(): ChunkSpec {
    return {
      prefix: keys.apiKeyPrefix,
      chunk: 200,
      counted: () => true,
      // The hash lookup first: a key whose hash is gone can't authenticate any more.
      remove: async (items) =>
        (await batchDeleteKeys(
          this.db,
          this.table,
          items
            .filter((i) => typeof i.key_hash === 'string')
            .map((i) => keys.apiKeyHash(i.key_hash as string)),
        )) + (await this.deleteItems(items)),
    };
  }

  private claimMappings(): ChunkSpec {
    return {
      ...this.plain(keys.claimMappingPrefix, 200, () => true),
      releases: (m) => (m.custom_role ? [this.roleRelease(m.role_id as string)] : []),
    };
  }

  private settings(workspaceId: string): ChunkSpec {
    return {
      ...this.plain(keys.settingsPrefix, 10, () => true),
      // Tiles settings release the tile matrix sets they name, as saving other settings would.
      releases: (s) =>
        s.kind === 'ogc-tiles'
          ? customTileMatrixSets(s.document as OGCTilesSettings).flatMap((id) =>
              this.settingsStore
                .tileMatrixSetReferences(workspaceId, id, -1)
                .map((r, n) => ({ key: `tms:${id}:${n}`, item: r.item })),
            )
          : [],
    };
  }

  private workspaceItems(): ChunkSpec {
    return {
      ...this.plain(keys.partitionStart, 1000, (i) => {
        const kind = countedWorkspaceEntities[i.entity as string];
        return kind !== undefined && !['api_keys', 'claim_mappings', 'settings'].includes(kind);
      }),
      skip: (i) => i.SK === keys.workspaceItemSortKey,
    };
  }

  // ---- layer groups ---------------------------------------------------------------------------

  /** Deletes the dependent group closure, outermost groups first; true when none is left. */
  private async removeGroups(op: DeletionOperation, deadline: number): Promise<boolean> {
    while (Date.now() < deadline) {
      const closure = await dependentGroupClosure(
        this.db,
        this.table,
        op.workspace_id,
        new Set([op.target_id]),
      );
      if (closure.length === 0) return true;
      const listed = new Set(closure.flatMap((g) => g.members.map((m) => m.resource)));
      const outermost = closure.filter((g) => !listed.has(g.public_id));
      let removed = 0;
      for (const g of outermost) if (await this.removeGroup(op, g)) removed++;
      if (removed === 0) throw new TransientError('The dependent layer groups changed meanwhile; retrying.');
    }
    return false;
  }

  private async removeGroup(op: DeletionOperation, g: LayerGroup): Promise<boolean> {
    // The same items as deleteLayerGroup, plus the progress of this operation.
    const items = [
      ...this.groups.deletionItems(g).map((i) => unguarded(i.item)),
      unguarded({
        Update: {
          TableName: this.table,
          Key: keys.deletion(op.id),
          UpdateExpression:
            'SET progress.deleted = progress.deleted + :one, updated_at = :now, write_units = if_not_exists(write_units, :zero) + :w',
          ConditionExpression: 'phase = :phase AND #s = :running',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':one': 1,
            ':zero': 0,
            ':w': this.takeUnits(),
            ':now': new Date().toISOString(),
            ':phase': 'layer_groups',
            ':running': 'running',
          },
        },
      }),
    ];
    try {
      const out = await this.send(() =>
        transact(this.db, items, undefined, {
          consumedCapacity: true,
          onCancelled: (codes) =>
            codes[codes.length - 1] === 'ConditionalCheckFailed'
              ? new StaleExecutionError(`Deletion ${op.id} is no longer running.`)
              : new ConditionFailed(),
        }),
      );
      this.pendingUnits += writeUnits(out);
      return true;
    } catch (error) {
      // The group changed meanwhile: the next round sees it as it is now.
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  // ---- the target -----------------------------------------------------------------------------

  private completion(op: DeletionOperation, now: string): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: keys.deletion(op.id),
        UpdateExpression:
          'SET #s = :completed, phase = :done, completed_at = :now, updated_at = :now, progress.deleted = progress.deleted + :one, write_units = if_not_exists(write_units, :zero) + :w REMOVE checkpoint_from, checkpoint_to',
        ConditionExpression: 'phase = :target AND #s = :running',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':completed': 'completed',
          ':done': 'done',
          ':target': 'target',
          ':running': 'running',
          ':now': now,
          ':one': 1,
          ':zero': 0,
          ':w': this.takeUnits(),
        },
      },
    };
  }

  private async finish(op: DeletionOperation, items: TransactItem[]): Promise<void> {
    try {
      await this.send(() =>
        transact(
          this.db,
          [...items, this.completion(op, new Date().toISOString())].map(unguarded),
          undefined,
          {
            onCancelled: (codes) => {
              // The completion failed: done by another runner, or not this execution's any more.
              if (codes[codes.length - 1] === 'ConditionalCheckFailed') return new ConditionFailed();
              if (codes.includes('ConditionalCheckFailed')) {
                return new CorruptItemError(
                  `The ${op.scope} ${op.target_id} is not the one this operation hid.`,
                );
              }
              return new TransientError('The final transaction was cancelled; retrying.');
            },
          },
        ),
      );
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      const current = await this.load(op.id);
      if (current.status === 'completed') return;
      throw new StaleExecutionError(`Deletion ${op.id} is ${current.status}.`);
    }
  }

  private async removeService(op: DeletionOperation): Promise<void> {
    const service = await this.get(keys.service(op.workspace_id, op.target_id));
    await this.finish(op, [
      {
        Delete: {
          TableName: this.table,
          Key: keys.service(op.workspace_id, op.target_id),
          ConditionExpression: 'deletion_id = :op',
          ExpressionAttributeValues: { ':op': op.id },
        },
      },
      ...(service
        ? [
            {
              Delete: {
                TableName: this.table,
                Key: keys.serviceName(op.workspace_id, service.name as string),
                ConditionExpression: 'service_id = :id',
                ExpressionAttributeValues: { ':id': op.target_id },
              },
            },
          ]
        : []),
      { Delete: { TableName: this.table, Key: keys.mosaic(op.workspace_id, op.target_id) } },
      activeDeletionsChange(this.table, op.workspace_id, -1).item,
    ]);
  }

  private async removeWorkspace(op: DeletionOperation): Promise<void> {
    const workspace = await this.get(keys.workspace(op.workspace_id));
    if (workspace?.usage_key_id) await this.usageKeys?.remove(workspace.usage_key_id as string);
    await this.finish(op, [
      {
        Delete: {
          TableName: this.table,
          Key: keys.workspace(op.workspace_id),
          ConditionExpression: 'deletion_id = :op',
          ExpressionAttributeValues: { ':op': op.id },
        },
      },
      {
        Delete: {
          TableName: this.table,
          Key: keys.workspaceName(op.workspace_name),
          ConditionExpression: 'workspace_id = :id',
          ExpressionAttributeValues: { ':id': op.workspace_id },
        },
      },
    ]);
  }

  // ---- failure --------------------------------------------------------------------------------

  /** running|pending → failed with the reason; a service's workspace stops waiting for it. */
  async recordFailure(id: string, attempt: number, message: string, now = new Date()): Promise<void> {
    const op = await this.load(id);
    // Only the current attempt may fail the operation (a stale execution just ends).
    if ((op.status !== 'pending' && op.status !== 'running') || op.attempt_count !== attempt) return;
    const items: TransactItem[] = [
      {
        Update: {
          TableName: this.table,
          Key: keys.deletion(id),
          UpdateExpression: 'SET #s = :failed, last_error = :error, updated_at = :now',
          ConditionExpression: '#s IN (:pending, :running) AND attempt_count = :attempt',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':failed': 'failed',
            ':pending': 'pending',
            ':running': 'running',
            ':attempt': op.attempt_count,
            ':error': message.slice(0, 1000),
            ':now': now.toISOString(),
          },
        },
      },
      ...(op.scope === 'service' ? [activeDeletionsChange(this.table, op.workspace_id, -1).item] : []),
    ];
    try {
      await this.send(() =>
        transact(this.db, items.map(unguarded), undefined, {
          onCancelled: (codes, error) =>
            codes.includes('ConditionalCheckFailed') ? new ConditionFailed() : (error as Error),
        }),
      );
    } catch (error) {
      // Already failed, retried or completed by someone else: nothing to record.
      if (error instanceof ConditionFailed) return;
      throw error;
    }
  }
}

/** Puts the merged delta into a reference update (`:d`). */
function withDelta(item: TransactItem, delta: number): TransactItem {
  if (!item.Update) return item;
  return {
    Update: {
      ...item.Update,
      ExpressionAttributeValues: { ...item.Update.ExpressionAttributeValues, ':d': delta },
    },
  };
}
