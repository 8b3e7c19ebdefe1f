/**
 * The deletion plan's counters (ADR 0101): a service's layer count and its layers' style and
 * custom-role reference counts, kept exact by the transactions that write layers, so a plan
 * reads them with one Query instead of walking every layer.
 *
 * - Layer counts: `SHARDS` items per service (`n`, and `writes`, bumped by every write that
 *   changes a count); a layer counts on the shard its id hashes to, so a burst of creates spreads
 *   over the shards instead of making one hot item.
 * - Reference counts: attributes `s:<style>` / `r:<role>` of `(shard, bucket)` items, the bucket
 *   by the reference's hash: one layer write touches at most `BUCKETS` of them (the transaction
 *   stays under DynamoDB's 100 items), and an item holds ~1/`BUCKETS` of the service's distinct
 *   references (it stays far under 400 KB).
 * - The base: present once the sum of the counters is exact; written with the service (zero), or
 *   by the first plan of a service older than the counters (a walk, then a transaction
 *   conditioned on no counted write having committed since the counters were read).
 */
import * as z from 'zod/mini';
import type { Layer } from '#domain/layers.ts';
import { customRoles, usedStyles } from '#domain/layers.ts';
import type { StoreClient } from './client.ts';
import { decoder } from './decode.ts';
import { keyCondition, queryInput, queryPages, type SortKeyRange } from './items.ts';
import { entities, type Key, keyOf, keys, parseKey } from './keys.ts';
import { attributes } from './table.ts';
import { type GuardedItem, putNew, type TransactItem, transactUnlessRaced } from './transactions.ts';

/** Layer-count shards per service (a hot item takes ~1,000 writes/s; this many take that many times more). */
export const SHARDS = 4;
/** Reference buckets per shard (a layer write touches at most this many reference items). */
export const BUCKETS = 8;

type Item = Record<string, unknown>;

/** What the counters of one service add up to. */
export interface PlanTallies {
  layers: number;
  styles: Map<string, number>;
  roles: Map<string, number>;
}

const STYLE = 's:';
const ROLE = 'r:';

/** FNV-1a (32 bits): a stable, well-spread hash of an id or a name. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The shard a layer counts on. */
export function shardOf(layerId: string): number {
  return hash(layerId) % SHARDS;
}

/** The bucket a reference attribute lives in. */
export function bucketOf(attribute: string): number {
  return hash(attribute) % BUCKETS;
}

/**
 * What a layer references (its styles and roles), as a walk reads it (a projection of the layer).
 * Each part may be absent: the walk counts what a layer item holds, as the deletion workflow
 * deletes a layer item whatever else it lacks (ADR 0070), so a plan never fails on one it can delete.
 */
type LayerReferences = Pick<Layer, 'default_style' | 'styles'> & { allowed_roles?: string[] };

/** A layer read for what it references only (the projection the deletion plan's walk reads). */
const toLayerReferences = /* @__PURE__ */ decoder<LayerReferences>('layer', () =>
  z.looseObject({
    allowed_roles: z.optional(z.array(z.string())),
    default_style: z.optional(z.string()),
    styles: z.optional(z.array(z.string())),
  }),
);

/** The reference attributes one layer holds (each counts once per layer). */
function referencesOf(l: LayerReferences): string[] {
  return [...usedStyles(l).map((s) => STYLE + s), ...customRoles(l.allowed_roles ?? []).map((r) => ROLE + r)];
}

/**
 * The counter writes of a layer change (`before` absent: created; `after` absent: deleted), to go
 * in the transaction that makes the change; none when no count changes.
 */
export function layerCountChanges(
  table: string,
  before: Layer | undefined,
  after: Layer | undefined,
): GuardedItem[] {
  const l = (after ?? before) as Layer;
  const delta = (after ? 1 : 0) - (before ? 1 : 0);
  const changes = new Map<string, number>();
  for (const a of before ? referencesOf(before) : []) changes.set(a, (changes.get(a) ?? 0) - 1);
  for (const a of after ? referencesOf(after) : []) changes.set(a, (changes.get(a) ?? 0) + 1);
  const byBucket = new Map<number, [string, number][]>();
  for (const [a, d] of changes) {
    if (d === 0) continue;
    const b = bucketOf(a);
    byBucket.set(b, [...(byBucket.get(b) ?? []), [a, d]]);
  }
  if (delta === 0 && byBucket.size === 0) return [];
  const shard = shardOf(l.id);
  const items: GuardedItem[] = [
    {
      item: {
        Update: {
          TableName: table,
          Key: keys.planCountLayers(l.workspace_id, l.service_id, shard),
          UpdateExpression: 'SET entity = :e, #part = :p, #shard = :s ADD #n :d, #writes :one',
          ExpressionAttributeNames: { '#part': 'part', '#shard': 'shard', '#n': 'n', '#writes': 'writes' },
          ExpressionAttributeValues: {
            ':e': entities.planCounter,
            ':p': 'layers',
            ':s': shard,
            ':d': delta,
            ':one': 1,
          },
        },
      },
    },
  ];
  for (const [bucket, deltas] of byBucket) {
    const names: Record<string, string> = { '#part': 'part' };
    const values: Record<string, unknown> = { ':e': entities.planCounter, ':p': 'refs' };
    const adds = deltas.map(([a, d], i) => {
      names[`#a${i}`] = a;
      values[`:d${i}`] = d;
      return `#a${i} :d${i}`;
    });
    items.push({
      item: {
        Update: {
          TableName: table,
          Key: keys.planCountRefs(l.workspace_id, l.service_id, shard, bucket),
          UpdateExpression: `SET entity = :e, #part = :p ADD ${adds.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    });
  }
  return items;
}

/** The base of a new service's counters: zero, exact from its first layer on. */
export function newServiceCounters(table: string, workspaceId: string, serviceId: string): GuardedItem {
  return putNew(table, {
    ...keys.planCountBase(workspaceId, serviceId),
    entity: entities.planCounter,
    part: 'base',
    n: 0,
  });
}

/**
 * A prefix as a closed key range (its keys are ASCII, so all sort below the prefix + U+10FFFF):
 * DynamoDB Local answers `begins_with` by reading the rest of the partition, a range by seeking it.
 */
export function prefixRange(prefix: string): SortKeyRange {
  return { from: prefix, to: `${prefix}\u{10FFFF}` };
}

/** Every counter item under `prefix` (a service's, or every service's; one Query, strongly consistent). */
async function counterItems(db: StoreClient, table: string, workspaceId: string, prefix: string) {
  const items: Item[] = [];
  await queryPages(
    db,
    queryInput(table, keyCondition(keys.workspacePartition(workspaceId), prefixRange(prefix)), {
      consistent: true,
    }),
    (page) => {
      items.push(...page);
      return true;
    },
  );
  return items;
}

function emptyTallies(): PlanTallies {
  return { layers: 0, styles: new Map(), roles: new Map() };
}

/** Adds an item's counts to `t` (n, and its reference attributes). */
function addItem(t: PlanTallies, item: Item, sign = 1) {
  for (const [name, value] of Object.entries(item)) {
    if (typeof value !== 'number') continue;
    if (name === 'n') t.layers += sign * value;
    else if (name.startsWith(STYLE)) tally(t.styles, name.slice(STYLE.length), sign * value);
    else if (name.startsWith(ROLE)) tally(t.roles, name.slice(ROLE.length), sign * value);
  }
}

function tally(map: Map<string, number>, key: string, by: number) {
  map.set(key, (map.get(key) ?? 0) + by);
}

/** A tally without its zero entries (a reference counted up and down again). */
function withoutZeros(map: Map<string, number>): Map<string, number> {
  return new Map([...map].filter(([, n]) => n !== 0));
}

/** What the counters read: their sum when exact, else what a recount needs to write the base. */
export type CounterReading =
  | { exact: true; tallies: PlanTallies }
  | { exact: false; counted: PlanTallies; writes: Map<number, number> };

/** Reads a service's counters (one Query). */
export async function readPlanCounters(
  db: StoreClient,
  table: string,
  workspaceId: string,
  serviceId: string,
): Promise<CounterReading> {
  return readingOf(await counterItems(db, table, workspaceId, keys.planCountPrefix(serviceId)));
}

/**
 * Reads the counters of every service of a workspace (one Query over their common prefix), by
 * service id. A service absent from the map has no counter item at all (it is older than them).
 */
export async function readWorkspacePlanCounters(
  db: StoreClient,
  table: string,
  workspaceId: string,
): Promise<Map<string, CounterReading>> {
  return planCountersIn(await counterItems(db, table, workspaceId, keys.planCountPrefixAll));
}

/**
 * The plan counters among a workspace's items (a walk of its partition holds them), by service
 * id; the other items are passed over.
 */
export function planCountersIn(items: readonly Item[]): Map<string, CounterReading> {
  const byService = new Map<string, Item[]>();
  for (const item of items) {
    const sk = item[attributes.sk];
    if (typeof sk !== 'string' || !sk.startsWith(keys.planCountPrefixAll)) continue;
    const serviceId = parseKey.planCountService(sk);
    const held = byService.get(serviceId);
    if (held) held.push(item);
    else byService.set(serviceId, [item]);
  }
  return new Map([...byService].map(([serviceId, held]) => [serviceId, readingOf(held)]));
}

/** What one service's counter items add up to. */
function readingOf(items: readonly Item[]): CounterReading {
  const t = emptyTallies();
  const exact = items.some((i) => i.part === 'base');
  const writes = new Map<number, number>();
  for (const item of items) {
    // A base's reference items without the base are a recount that never committed its base: stale.
    if (!exact && item.part === 'base_refs') continue;
    addItem(t, item);
    if (item.part === 'layers' && typeof item.shard === 'number')
      writes.set(item.shard, item.writes as number);
  }
  if (!exact) return { exact: false, counted: t, writes };
  return { exact: true, tallies: { ...t, styles: withoutZeros(t.styles), roles: withoutZeros(t.roles) } };
}

/**
 * Writes the base of a service's counters from a recount (`truth`, walked after `reading`): the
 * difference between the truth and what the counters held, committed only if no write that
 * changes a count committed since the counters were read (each bumps its shard's `writes`) and
 * the service and workspace are still active (no deletion removes layers unseen meanwhile).
 * False when refused: the next plan recounts.
 */
export async function writeBase(
  db: StoreClient,
  table: string,
  workspaceId: string,
  serviceId: string,
  reading: Extract<CounterReading, { exact: false }>,
  truth: PlanTallies,
): Promise<boolean> {
  const unchanged: TransactItem[] = [];
  for (let s = 0; s < SHARDS; s++) {
    const seen = reading.writes.get(s);
    unchanged.push({
      ConditionCheck: {
        TableName: table,
        Key: keys.planCountLayers(workspaceId, serviceId, s),
        ConditionExpression: seen === undefined ? 'attribute_not_exists(#w)' : '#w = :w',
        ExpressionAttributeNames: { '#w': 'writes' },
        ...(seen === undefined ? {} : { ExpressionAttributeValues: { ':w': seen } }),
      },
    });
  }
  const active = (key: Key): TransactItem => ({
    ConditionCheck: {
      TableName: table,
      Key: key,
      ConditionExpression: '#s = :active',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
    },
  });
  const counted = reading.counted;
  const buckets: Item[] = Array.from({ length: BUCKETS }, (_, b) => ({
    ...keys.planCountRefs(workspaceId, serviceId, 'BASE', b),
    entity: entities.planCounter,
    part: 'base_refs',
  }));
  const differences = (prefix: string, truths: Map<string, number>, held: Map<string, number>) => {
    for (const name of new Set([...truths.keys(), ...held.keys()])) {
      const d = (truths.get(name) ?? 0) - (held.get(name) ?? 0);
      if (d !== 0) (buckets[bucketOf(prefix + name)] as Item)[prefix + name] = d;
    }
  };
  differences(STYLE, truth.styles, counted.styles);
  differences(ROLE, truth.roles, counted.roles);
  const items: TransactItem[] = [
    ...unchanged,
    active(keys.service(workspaceId, serviceId)),
    active(keys.workspace(workspaceId)),
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.planCountBase(workspaceId, serviceId),
          entity: entities.planCounter,
          part: 'base',
          n: truth.layers - counted.layers,
        },
        ConditionExpression: `attribute_not_exists(${attributes.pk})`,
      },
    },
    ...buckets.map((Item): TransactItem => ({ Put: { TableName: table, Item } })),
  ];
  return transactUnlessRaced(db, items);
}

/**
 * The deletes of a service's counters, to go in the transaction that removes the service (at most
 * 1 + SHARDS × (1 + BUCKETS) + BUCKETS = 45 items, so they fit beside it).
 */
export async function counterDeletes(
  db: StoreClient,
  table: string,
  workspaceId: string,
  serviceId: string,
): Promise<TransactItem[]> {
  const items = await counterItems(db, table, workspaceId, keys.planCountPrefix(serviceId));
  return items.map((i) => ({ Delete: { TableName: table, Key: keyOf(i) } }));
}

/** The tallies of one layer as a walk counts them. */
export function tallyLayer(t: PlanTallies, l: Item) {
  t.layers++;
  for (const a of referencesOf(toLayerReferences(l))) {
    if (a.startsWith(STYLE)) tally(t.styles, a.slice(STYLE.length), 1);
    else tally(t.roles, a.slice(ROLE.length), 1);
  }
}

export { emptyTallies };
