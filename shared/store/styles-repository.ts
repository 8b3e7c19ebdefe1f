import * as z from 'zod/mini';
import { AlreadyExistsError, InvalidInputError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import type { Style, StyleRepository, StyleUsage } from '#domain/styles.ts';
import { decoder, text } from './decode.ts';
import { ConditionFailed } from './errors.ts';
import { DynamoRepository, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { summaryChangeOf } from './summary-counters.ts';
import { attributes, itemExists } from './table.ts';
import {
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  unguarded,
  workspaceIsActive,
} from './transactions.ts';

/** A style's fields but its body (what a listing reads). */
const styleFields = () => ({
  id: z.string(),
  workspace_id: z.string(),
  name: z.string(),
  format: text<Style['format']>(),
  title: z.optional(z.string()),
  description: z.optional(z.string()),
  asset_refs: z.array(z.string()),
  version: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A stored style, without the count of layers using it (the store's, not the domain's). */
export const toStyle = /* @__PURE__ */ decoder<Style>(
  'style',
  () => z.looseObject({ ...styleFields(), body: z.string() }),
  {
    strip: ['layer_ref_count'],
  },
);

/** A style as a listing reads it (projected without its body). */
export const toListedStyle = /* @__PURE__ */ decoder<Omit<Style, 'body'>>('style', () =>
  z.looseObject(styleFields()),
);

/**
 * DynamoDB implementation of the style port. Styles are keyed by name in the workspace partition.
 * Each referenced asset gets a record `ASSETREF#<asset>#<style>` and `ADD ref_count ±1` on the
 * asset's item in the style's transaction (ADR 0052). Layers will count their use of a style in
 * the style item's `layer_ref_count`; delete and rename are conditioned on it being 0.
 */
export class DynamoStyleRepository extends DynamoRepository implements StyleRepository {
  async find(workspaceId: string, name: string): Promise<Style | undefined> {
    const item = await this.get(keys.style(workspaceId, name));
    return item ? toStyle(item) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<Omit<Style, 'body'>>> {
    const { pk, sk } = attributes;
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.stylePrefix,
      limit,
      cursor,
      {
        projection: {
          expression: `${pk}, ${sk}, id, workspace_id, #n, #f, title, description, asset_refs, version, created_at, updated_at`,
          names: { '#n': 'name', '#f': 'format' },
        },
      },
    );
    return { items: page.items.map(toListedStyle), nextCursor: page.nextCursor };
  }

  private workspaceActive(workspaceId: string): GuardedItem {
    return workspaceIsActive(this.table, workspaceId);
  }

  private count(workspaceId: string, asset: string, delta: 1 | -1): GuardedItem {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: keys.styleAsset(workspaceId, asset),
          UpdateExpression: 'ADD ref_count :d',
          ConditionExpression: itemExists,
          ExpressionAttributeValues: { ':d': delta },
        },
      },
      onConditionFailed: () =>
        new InvalidInputError(
          'unknown_asset',
          `The style references asset '${asset}', which does not exist; upload it first.`,
        ),
    };
  }

  private reference(s: Style, asset: string): GuardedItem {
    return unguarded({
      Put: {
        TableName: this.table,
        Item: {
          ...keys.styleAssetRef(s.workspace_id, asset, s.name),
          entity: entities.styleAssetRef,
          asset,
          style: s.name,
          style_id: s.id,
        },
      },
    });
  }

  private unreference(s: Style, asset: string): GuardedItem {
    return unguarded({
      Delete: { TableName: this.table, Key: keys.styleAssetRef(s.workspace_id, asset, s.name) },
    });
  }

  private put(s: Style): GuardedItem {
    return putNew(
      this.table,
      { ...keys.style(s.workspace_id, s.name), entity: entities.style, ...s, layer_ref_count: 0 },
      () =>
        new AlreadyExistsError('style_exists', `A style named '${s.name}' already exists in this workspace.`),
    );
  }

  /** A same-name replace: an UpdateItem, so the layers' `layer_ref_count` is kept. */
  private replace(s: Style, previousVersion: number): GuardedItem {
    const names: Record<string, string> = { '#v': 'version' };
    const values: Record<string, unknown> = { ':prev': previousVersion };
    const sets: string[] = [];
    const removes: string[] = [];
    for (const field of [
      'format',
      'title',
      'description',
      'body',
      'asset_refs',
      'version',
      'updated_at',
    ] as const) {
      names[`#${field}`] = field;
      if (s[field] === undefined) removes.push(`#${field}`);
      else {
        sets.push(`#${field} = :${field}`);
        values[`:${field}`] = s[field];
      }
    }
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: keys.style(s.workspace_id, s.name),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: '#v = :prev',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      onConditionFailed: () => new ConditionFailed(),
    };
  }

  private remove(s: Style): GuardedItem {
    return {
      item: {
        Delete: {
          TableName: this.table,
          Key: keys.style(s.workspace_id, s.name),
          ConditionExpression:
            '#v = :v AND (attribute_not_exists(layer_ref_count) OR layer_ref_count <= :zero)',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': s.version, ':zero': 0 },
        },
      },
      onConditionFailed: () => new ConditionFailed(),
    };
  }

  async usage(s: Style): Promise<StyleUsage | undefined> {
    const current = await this.get(keys.style(s.workspace_id, s.name));
    if (!current) return undefined;
    return {
      version: current.version as number,
      layers: (current.layer_ref_count as number | undefined) ?? 0,
    };
  }

  /** Runs the transaction: false when the style's own condition (version, layers) failed. */
  private async run(items: GuardedItem[]): Promise<boolean> {
    try {
      await transact(this.db, items, concurrentModification('The style'));
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  async create(s: Style): Promise<void> {
    await transact(this.db, [
      this.workspaceActive(s.workspace_id),
      this.put(s),
      ...s.asset_refs.flatMap((a) => [this.count(s.workspace_id, a, 1), this.reference(s, a)]),
      ...summaryChangeOf(this.table, 'style', s, undefined, s),
    ]);
  }

  async update(previous: Style, next: Style): Promise<boolean> {
    const before = new Set(previous.asset_refs);
    const after = new Set(next.asset_refs);
    const counts = [
      ...next.asset_refs.filter((a) => !before.has(a)).map((a) => this.count(next.workspace_id, a, 1)),
      ...previous.asset_refs.filter((a) => !after.has(a)).map((a) => this.count(next.workspace_id, a, -1)),
    ];
    if (previous.name === next.name) {
      return this.run([
        this.replace(next, previous.version),
        ...counts,
        ...next.asset_refs.filter((a) => !before.has(a)).map((a) => this.reference(next, a)),
        ...previous.asset_refs.filter((a) => !after.has(a)).map((a) => this.unreference(previous, a)),
      ]);
    }
    return this.run([
      this.remove(previous),
      this.put(next),
      ...counts,
      ...previous.asset_refs.map((a) => this.unreference(previous, a)),
      ...next.asset_refs.map((a) => this.reference(next, a)),
    ]);
  }

  async delete(s: Style): Promise<boolean> {
    return this.run([
      this.remove(s),
      ...s.asset_refs.flatMap((a) => [this.count(s.workspace_id, a, -1), this.unreference(s, a)]),
      ...summaryChangeOf(this.table, 'style', s, s, undefined),
    ]);
  }
}
