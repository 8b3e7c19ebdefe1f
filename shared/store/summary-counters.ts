/**
 * The workspace summary's counters (ADR 0137), kept exact by the transactions that write the
 * counted entities, so getWorkspaceSummary reads one Query of a handful of items instead of
 * walking the workspace. The same scheme as the deletion plan's counters (ADR 0101):
 *
 * - `SHARDS` items per workspace, each with one attribute per counted field and `writes`, bumped
 *   by every write that changes a count; an entity counts on the shard its id hashes to, so a
 *   burst of creates spreads over the shards instead of making one hot item.
 * - The base: present once the sum of the counters is exact; written with the workspace (empty),
 *   or by the first summary of a workspace older than the counters — a walk of its partition,
 *   then a transaction conditioned on no counted write having committed since the counters were
 *   read. It holds the difference between the walk and the counters.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  addCounts,
  type CountedKind,
  countChange,
  countsOf,
  isSummaryField,
  type SummaryCounts,
  type SummaryField,
} from '#domain/workspace-summary.ts';
import type { StoreClient } from './client.ts';
import { storeCall } from './errors.ts';
import { keyCondition, queryInput, queryPages } from './items.ts';
import { entities, keys } from './keys.ts';
import { hash, prefixRange } from './plan-counters.ts';
import { attributes } from './table.ts';
import { type GuardedItem, putNew, type TransactItem, transactUnlessRaced } from './transactions.ts';

/** Counter shards per workspace (a hot item takes ~1,000 writes/s; this many take that many times more). */
export const SUMMARY_SHARDS = 4;

type Item = Record<string, unknown>;

/** The entity tags the summary counts, by the kind the domain counts them as. */
const countedEntities: Readonly<Record<string, CountedKind>> = {
  [entities.service]: 'service',
  [entities.layer]: 'layer',
  [entities.style]: 'style',
  [entities.apiKey]: 'api_key',
  [entities.claimMapping]: 'claim_mapping',
  [entities.importJob]: 'import',
};

/** The shard a field's release goes to in a chunk commit: distinct for the fields one removal releases. */
export function releaseShard(field: SummaryField): number {
  if (field === 'layers_disabled') return 1;
  return 0;
}

/** The shard an entity counts on. */
function shardOf(entityId: string): number {
  return hash(entityId) % SUMMARY_SHARDS;
}

/** The counter write of a change of the counts (to go in the change's transaction); none when nothing changes. */
export function summaryChange(
  table: string,
  workspaceId: string,
  entityId: string,
  change: SummaryCounts,
): GuardedItem[] {
  return summaryChangeOnShard(table, workspaceId, shardOf(entityId), change);
}

/**
 * The same on a given shard: a transaction that moves several fields in separate items (the
 * deletion's chunk commit releases each field as its own reference) puts each on its own shard —
 * DynamoDB refuses two writes of one item in one transaction.
 */
export function summaryChangeOnShard(
  table: string,
  workspaceId: string,
  shard: number,
  change: SummaryCounts,
): GuardedItem[] {
  const deltas = Object.entries(change).filter(([, d]) => d !== 0) as [SummaryField, number][];
  if (deltas.length === 0) return [];
  const names: Record<string, string> = { '#writes': 'writes', '#shard': 'shard' };
  const values: Record<string, unknown> = { ':e': entities.summaryCounter, ':s': shard, ':one': 1 };
  const adds = deltas.map(([field, d], i) => {
    names[`#f${i}`] = field;
    values[`:d${i}`] = d;
    return `#f${i} :d${i}`;
  });
  return [
    {
      item: {
        Update: {
          TableName: table,
          Key: keys.summaryCount(workspaceId, shard),
          UpdateExpression: `SET entity = :e, #shard = :s ADD ${adds.join(', ')}, #writes :one`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    },
  ];
}

/** The counter write of replacing `before` by `after` (absent: created or deleted) of one entity. */
export function summaryChangeOf(
  table: string,
  kind: CountedKind,
  entity: { id: string; workspace_id: string },
  before: object | undefined,
  after: object | undefined,
): GuardedItem[] {
  return summaryChange(table, entity.workspace_id, entity.id, countChange(kind, before, after));
}

/** The base of a new workspace's counters: empty, exact from its first entity on. */
export function newWorkspaceSummary(table: string, workspaceId: string): GuardedItem {
  return putNew(table, { ...keys.summaryCount(workspaceId, 'BASE'), entity: entities.summaryCounter });
}

/** The counted fields of a counter item. */
function countsIn(item: Item): SummaryCounts {
  const counts: SummaryCounts = {};
  for (const [name, value] of Object.entries(item)) {
    if (isSummaryField(name) && typeof value === 'number') counts[name as SummaryField] = value;
  }
  return counts;
}

/** What the counters read: their sum when exact, else what a recount needs to write the base. */
export type SummaryReading =
  | { exact: true; counts: SummaryCounts }
  | { exact: false; counted: SummaryCounts; writes: Map<number, number> };

/** A workspace's counter items (one strongly consistent Query of at most SHARDS + 1 items). */
async function counterItems(db: StoreClient, table: string, workspaceId: string): Promise<Item[]> {
  const out = await storeCall(() =>
    db.send(
      new QueryCommand(
        queryInput(
          table,
          keyCondition(keys.workspacePartition(workspaceId), prefixRange(keys.summaryCountPrefix)),
          { consistent: true },
        ),
      ),
    ),
  );
  return (out.Items ?? []) as Item[];
}

/** The shards' sum and writes (the base left out). */
function shardsOf(items: readonly Item[]): Extract<SummaryReading, { exact: false }> {
  let counted: SummaryCounts = {};
  const writes = new Map<number, number>();
  for (const item of items) {
    if (typeof item.shard !== 'number') continue;
    counted = addCounts(counted, countsIn(item));
    if (typeof item.writes === 'number') writes.set(item.shard, item.writes);
  }
  return { exact: false, counted, writes };
}

/** Reads a workspace's counters: their sum with the base when it exists (exact), else the shards'. */
export async function readSummaryCounters(
  db: StoreClient,
  table: string,
  workspaceId: string,
): Promise<SummaryReading> {
  return summaryCountersIn(await counterItems(db, table, workspaceId));
}

/** The summary counters among a workspace's items (a walk of its partition holds them); the other items are passed over. */
export function summaryCountersIn(items: readonly Item[]): SummaryReading {
  const held = items.filter((i) => {
    const sk = i[attributes.sk];
    return typeof sk === 'string' && sk.startsWith(keys.summaryCountPrefix);
  });
  const shards = shardsOf(held);
  const base = held.find((i) => typeof i.shard !== 'number');
  return base ? { exact: true, counts: addCounts(shards.counted, countsIn(base)) } : shards;
}

/** Walks a workspace's partition and counts what the counters count (strongly consistent). */
export async function recountWorkspace(
  db: StoreClient,
  table: string,
  workspaceId: string,
): Promise<SummaryCounts> {
  let counts: SummaryCounts = {};
  await queryPages(
    db,
    queryInput(table, keyCondition(keys.workspacePartition(workspaceId)), {
      consistent: true,
      projection: {
        expression: '#entity, #enabled, #revoked, #status, #expires',
        names: {
          '#entity': 'entity',
          '#enabled': 'enabled',
          '#revoked': 'revoked',
          '#status': 'status',
          '#expires': 'expires_at',
        },
      },
    }),
    (page) => {
      for (const item of page) {
        const kind = countedEntities[item.entity as string];
        if (kind) counts = addCounts(counts, countsOf(kind, item));
      }
      return true;
    },
  );
  return counts;
}

/** The difference `truth − held`, as counter attributes (zeros left out). */
function difference(truth: SummaryCounts, held: SummaryCounts): Item {
  return addCounts(truth, held, -1);
}

/**
 * Writes the base of a workspace's counters from a recount (`truth`, walked after `reading`): the
 * difference between the truth and what the counters held, committed only if no write that
 * changes a count committed since the counters were read (each bumps its shard's `writes`) and the
 * workspace is still active. False when refused: the next summary recounts.
 */
export async function writeSummaryBase(
  db: StoreClient,
  table: string,
  workspaceId: string,
  reading: Extract<SummaryReading, { exact: false }>,
  truth: SummaryCounts,
  replace = false,
): Promise<boolean> {
  const unchanged: TransactItem[] = [];
  for (let s = 0; s < SUMMARY_SHARDS; s++) {
    const seen = reading.writes.get(s);
    unchanged.push({
      ConditionCheck: {
        TableName: table,
        Key: keys.summaryCount(workspaceId, s),
        ConditionExpression: seen === undefined ? 'attribute_not_exists(#w)' : '#w = :w',
        ExpressionAttributeNames: { '#w': 'writes' },
        ...(seen === undefined ? {} : { ExpressionAttributeValues: { ':w': seen } }),
      },
    });
  }
  const items: TransactItem[] = [
    ...unchanged,
    {
      ConditionCheck: {
        TableName: table,
        Key: keys.workspace(workspaceId),
        ConditionExpression: '#s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':active': 'active' },
      },
    },
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.summaryCount(workspaceId, 'BASE'),
          entity: entities.summaryCounter,
          ...difference(truth, reading.counted),
        },
        // A first base only where none is (a concurrent summary may have written it); a repair replaces it.
        ...(replace ? {} : { ConditionExpression: `attribute_not_exists(${attributes.pk})` }),
      },
    },
  ];
  return transactUnlessRaced(db, items);
}

/** How many times a summary recounts when writes keep racing its recount. */
const RECOUNT_ATTEMPTS = 3;

/**
 * The counts of a workspace: the counters' sum when exact; else a recount that writes the base
 * (retried while writes race it; the last recount is answered even if its base lost the race).
 */
export async function workspaceCounts(
  db: StoreClient,
  table: string,
  workspaceId: string,
): Promise<SummaryCounts> {
  let truth: SummaryCounts = {};
  for (let attempt = 0; attempt < RECOUNT_ATTEMPTS; attempt++) {
    const reading = await readSummaryCounters(db, table, workspaceId);
    if (reading.exact) return reading.counts;
    truth = await recountWorkspace(db, table, workspaceId);
    if (await writeSummaryBase(db, table, workspaceId, reading, truth)) return truth;
  }
  return truth;
}

/**
 * Sets a workspace's counters to a recount (the integrity repair, ADR 0138): the base becomes the
 * difference between the walk and the shards, under the same conditions as a first base. False
 * when a counted write raced it (the repair reports that and the next check finds out again).
 */
export async function resetSummaryBase(
  db: StoreClient,
  table: string,
  workspaceId: string,
): Promise<boolean> {
  const shards = shardsOf(await counterItems(db, table, workspaceId));
  const truth = await recountWorkspace(db, table, workspaceId);
  return writeSummaryBase(db, table, workspaceId, shards, truth, true);
}
