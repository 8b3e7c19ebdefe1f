import { createHash } from 'node:crypto';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import {
  type AuditChange,
  type AuditFilter,
  type AuditRecord,
  type AuditScope,
  type AuditTrail,
  type ChangeAction,
  REFUSAL_WINDOW_SECONDS,
  type Refusal,
  type RefusalLog,
  refusalKind,
  refusalWindow,
} from '#domain/audit.ts';
import type { Page } from '#domain/page.ts';
import { type ChangeContext, currentChange } from './change-context.ts';
import { documentClient, type StoreClient, tableName } from './client.ts';
import { decoder, text } from './decode.ts';
import { ConditionFailed, storeCall } from './errors.ts';
import { type Expression, getItem, listingPage } from './items.ts';
import { describeKey, type EntityRef, entities, type Key, keys, parseKey } from './keys.ts';
import { mergedIndexPage } from './merged-listing.ts';
import { decodeCursor, encodeCursor } from './paging.ts';
import { attributes, itemAbsent, itemExists } from './table.ts';

/*
 * The audit record of a change (ADR 0094): written by `transact` in the same transaction as the
 * change it records, so it exists exactly when the change committed. The catalog events are read
 * from these records on the table's stream (`catalogEventsOf`), never written beside the change.
 */

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type Item = Record<string, unknown>;

/** Attributes whose assignment makes an Update a change of its entity (others are counters and progress). */
const CHANGE_ATTRIBUTES = new Set(['version', 'status', 'generation', 'revision', 'revoked']);

/** Entities whose every write is progress, except the ones that set their status. */
const STATUS_ONLY = new Set<string>([
  entities.deletion,
  entities.importJob,
  entities.mosaicHarvestJob,
  entities.tileCacheJob,
]);

const num = (value: unknown) => (typeof value === 'number' ? value : undefined);
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The top-level comma-separated parts of an expression clause (commas inside calls stay). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** The SET assignments of an update expression: attribute name → the expression assigned. */
function assignments(update: {
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}): Map<string, string> {
  const out = new Map<string, string>();
  const expression = update.UpdateExpression ?? '';
  const set = /\bSET\s+([\s\S]*?)(?=\s+\b(?:REMOVE|ADD|DELETE)\b|$)/i.exec(expression);
  if (!set?.[1]) return out;
  for (const part of splitTopLevel(set[1])) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const lhs = part.slice(0, eq).trim();
    const name = update.ExpressionAttributeNames?.[lhs] ?? lhs;
    out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** The value an assignment's expression gives `version`, where it can be read off the item. */
function versionAfter(
  expression: string,
  update: {
    ConditionExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  },
): number | undefined {
  const values = update.ExpressionAttributeValues ?? {};
  if (/^:\w+$/.test(expression)) return num(values[expression]);
  // `#v = #v + :one` under the condition `#v = :v`: the new version is :v + :one.
  const increment = /^(#?\w+)\s*\+\s*(:\w+)$/.exec(expression);
  if (!increment?.[1] || !increment[2]) return undefined;
  const guard = new RegExp(`${increment[1]}\\s*=\\s*(:\\w+)`).exec(update.ConditionExpression ?? '');
  const before = guard?.[1] ? num(values[guard[1]]) : undefined;
  const step = num(values[increment[2]]);
  return before !== undefined && step !== undefined ? before + step : undefined;
}

/** The entity's type as the API names it (ADR 0094). */
const TYPES: Record<string, string> = {
  [entities.workspace]: 'workspace',
  [entities.service]: 'service',
  [entities.layer]: 'layer',
  [entities.layerGroup]: 'layer_group',
  [entities.style]: 'style',
  [entities.styleAsset]: 'style_asset',
  [entities.settings]: 'settings',
  [entities.tileMatrixSet]: 'tile_matrix_set',
  [entities.apiKey]: 'api_key',
  [entities.role]: 'role',
  [entities.rolePolicy]: 'role_policy',
  [entities.claimMapping]: 'claim_mapping',
  [entities.mosaic]: 'mosaic',
  [entities.mosaicHarvestJob]: 'mosaic_harvest_job',
  [entities.tileCache]: 'tile_cache',
  [entities.tileCacheJob]: 'tile_cache_job',
  [entities.cacheEpochs]: 'cache',
  [entities.deletion]: 'deletion',
  [entities.importJob]: 'import',
  [entities.browserSession]: 'browser_session',
};

function change(ref: EntityRef, action: ChangeAction, version?: number, status?: string): AuditChange {
  return {
    type: TYPES[ref.entity] ?? ref.entity,
    id: ref.id,
    ...(ref.workspaceId ? { workspace_id: ref.workspaceId } : {}),
    ...(ref.parentId ? { parent_id: ref.parentId } : {}),
    action,
    ...(version !== undefined ? { version } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

/** The change one item of a transaction makes, if it is a change of a catalog entity. */
function changeOf(item: TransactItem, importEventWritten: boolean): AuditChange | undefined {
  if (item.Put) {
    const written = item.Put.Item as Item;
    const ref = describeKey({ PK: written[attributes.pk] as string, SK: written[attributes.sk] as string });
    if (!ref) return undefined;
    // An import's job is rewritten on every step; a change is a step its history records.
    if (ref.entity === entities.importJob && !importEventWritten) return undefined;
    const version = num(written.version);
    const created = item.Put.ConditionExpression === itemAbsent || version === 1;
    return change(ref, created ? 'created' : 'updated', version, str(written.status));
  }
  if (item.Update) {
    const ref = describeKey(item.Update.Key as Key);
    if (!ref) return undefined;
    const set = assignments(item.Update);
    const status = set.get('status');
    const changed = STATUS_ONLY.has(ref.entity)
      ? status !== undefined
      : [...set.keys()].some((name) => CHANGE_ATTRIBUTES.has(name));
    if (!changed) return undefined;
    const values = item.Update.ExpressionAttributeValues ?? {};
    const version = set.has('version') ? versionAfter(set.get('version') as string, item.Update) : undefined;
    return change(ref, 'updated', version, status ? str(values[status]) : undefined);
  }
  if (item.Delete) {
    const ref = describeKey(item.Delete.Key as Key);
    return ref ? change(ref, 'deleted') : undefined;
  }
  return undefined;
}

/** The key of an item of a transaction (whichever kind of write it is). */
function keyOfItem(item: TransactItem): Key | undefined {
  const key = item.Put
    ? { PK: item.Put.Item?.[attributes.pk], SK: item.Put.Item?.[attributes.sk] }
    : (item.Update?.Key ?? item.Delete?.Key ?? item.ConditionCheck?.Key);
  return key && typeof key.PK === 'string' ? (key as Key) : undefined;
}

/** The workspace a transaction's change belongs to: of its items' partitions, else of a written item. */
function workspaceOf(items: TransactItem[]): string | undefined {
  for (const item of items) {
    const pk = keyOfItem(item)?.PK;
    if (pk?.startsWith(keys.workspacePartitionPrefix)) return parseKey.workspaceId(pk);
  }
  for (const item of items) {
    const id = str((item.Put?.Item as Item | undefined)?.workspace_id);
    if (id) return id;
  }
  return undefined;
}

/** Every catalog change a transaction's items make (empty for bookkeeping-only transactions). */
export function changesOf(items: TransactItem[]): AuditChange[] {
  const importEventWritten = items.some(
    (i) => (i.Put?.Item as Item | undefined)?.entity === entities.importEvent,
  );
  return items.flatMap((item) => changeOf(item, importEventWritten) ?? []);
}

/** A time-ordered id (UUIDv7 layout): audit records sort by it within a millisecond. */
function auditId(now: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const view = new DataView(bytes.buffer);
  view.setUint16(0, Math.floor(now / 2 ** 32));
  view.setUint32(2, now % 2 ** 32);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** How long audit records are kept (`expires_at_epoch`, the table's TTL). */
export interface AuditRetention {
  days: number;
}

/** The stored item of an audit record. */
export function auditItem(
  record: Omit<AuditRecord, 'id' | 'at'>,
  retention: AuditRetention,
  now = Date.now(),
): Item {
  const at = new Date(now).toISOString();
  const id = auditId(now);
  return {
    ...keys.auditRecord(record.workspace_id, at, id),
    ...keys.auditListing(at, id),
    entity: entities.auditRecord,
    id,
    at,
    ...record,
    expires_at_epoch: Math.floor(now / 1000) + Math.round(retention.days * 86400),
  };
}

/** The principal part of a record, from the change context. */
function principalOf(context: ChangeContext): AuditRecord['principal'] {
  return {
    id: context.principalId,
    auth_method: context.authMethod,
    ...(context.subject ? { subject: context.subject } : {}),
  };
}

/**
 * The Put of the audit record of a transaction's change, attributed to the current change
 * context; undefined when the transaction changes no catalog entity.
 */
export function auditPutFor(items: TransactItem[], retention: AuditRetention): TransactItem | undefined {
  const changes = changesOf(items);
  if (changes.length === 0) return undefined;
  const first = items[0];
  const table =
    first?.Put?.TableName ??
    first?.Update?.TableName ??
    first?.Delete?.TableName ??
    first?.ConditionCheck?.TableName;
  const context = currentChange();
  const workspaceId = workspaceOf(items);
  const item = auditItem(
    {
      ...(workspaceId ? { workspace_id: workspaceId } : {}),
      operation: context.operation,
      principal: principalOf(context),
      request_id: context.requestId,
      outcome: 'succeeded',
      changes,
    },
    retention,
  );
  return { Put: { TableName: table, Item: item, ConditionExpression: itemAbsent } };
}

/** The audit record of a request that was refused: the first of its kind in its window, counted 1. */
export function refusalItem(refusal: Refusal, retention: AuditRetention, now = Date.now()): Item {
  const item = auditItem(
    {
      ...(refusal.workspaceId ? { workspace_id: refusal.workspaceId } : {}),
      operation: refusal.operation,
      principal: refusal.principal,
      request_id: refusal.requestId,
      outcome: 'refused',
      status: refusal.status,
      reason: refusal.reason,
      changes: [],
    },
    retention,
    now,
  );
  return { ...item, count: 1, last_at: item.at, last_request_id: refusal.requestId };
}

/** How many times a refusal's tally is read and written again when other refusals of its kind win the race. */
const TALLY_ATTEMPTS = 5;

/** A tally outlives its window by this much (its TTL; nothing reads it after the window). */
const TALLY_TTL_SECONDS = 3600;

/** An audit record as stored, without its keys. */
export const readAuditRecord = /* @__PURE__ */ decoder<AuditRecord>(
  'audit record',
  () =>
    z.looseObject({
      id: z.string(),
      at: z.string(),
      workspace_id: z.optional(z.string()),
      operation: z.string(),
      principal: z.looseObject({
        id: z.string(),
        auth_method: z.string(),
        subject: z.optional(z.string()),
      }),
      request_id: z.string(),
      outcome: text<AuditRecord['outcome']>(),
      status: z.optional(z.number()),
      reason: z.optional(z.string()),
      changes: z.array(
        z.looseObject({
          type: z.string(),
          id: z.string(),
          workspace_id: z.optional(z.string()),
          parent_id: z.optional(z.string()),
          action: text<ChangeAction>(),
          version: z.optional(z.number()),
          status: z.optional(z.string()),
        }) satisfies z.ZodMiniType<AuditChange>,
      ),
      count: z.optional(z.number()),
      last_at: z.optional(z.string()),
      last_request_id: z.optional(z.string()),
    }),
  { strip: ['expires_at_epoch'] },
);

/** The filter of a listing as a FilterExpression (undefined when there is nothing to filter). */
function filterOf(filter: AuditFilter): Expression | undefined {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filter.operation) {
    parts.push('#op = :op');
    names['#op'] = 'operation';
    values[':op'] = filter.operation;
  }
  if (filter.principal) {
    parts.push('#p.#pid = :pid');
    names['#p'] = 'principal';
    names['#pid'] = 'id';
    values[':pid'] = filter.principal;
  }
  if (filter.outcome) {
    parts.push('#o = :o');
    names['#o'] = 'outcome';
    values[':o'] = filter.outcome;
  }
  return parts.length ? { expression: parts.join(' AND '), names, values } : undefined;
}

/** The sort-key window of `since`/`until` (sort keys are `<ISO time>#<id>`). */
function windowOf(filter: AuditFilter): { from: string; to: string } {
  return { from: filter.since ?? '0', to: `${filter.until ?? '9'}#~` };
}

/** Pages read to fill a filtered page before answering a short one with a cursor. */
const FILL_ROUNDS = 5;

/**
 * The position a global listing's cursor holds (ADR 0113): the sort key of the last record
 * returned. A cursor from before the shards (the unsharded partition's `LastEvaluatedKey`, ADR
 * 0097) still resumes where it was: its sort key is the same position.
 */
function globalPosition(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  let position: Record<string, string> | undefined;
  try {
    position = decodeCursor(cursor, { [attributes.gsi1sk]: true });
  } catch {
    position = decodeCursor(cursor, {
      [attributes.pk]: { prefix: keys.auditPartitionPrefix },
      [attributes.sk]: true,
      [attributes.gsi1pk]: { equals: keys.auditUnshardedPartition },
      [attributes.gsi1sk]: true,
    });
  }
  return position?.[attributes.gsi1sk];
}

/** The audit trail in the single table (ADR 0094). */
export class DynamoAuditTrail implements AuditTrail, RefusalLog {
  constructor(
    private readonly retention: AuditRetention,
    private readonly db: StoreClient = documentClient(),
    private readonly table = tableName(),
    private readonly now: () => number = Date.now,
  ) {}

  async list(
    scope: AuditScope,
    filter: AuditFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<AuditRecord>> {
    const range = windowOf(filter);
    const filterExpression = filterOf(filter);
    const options = { fillRounds: FILL_ROUNDS, ...(filterExpression ? { filter: filterExpression } : {}) };
    // Newest first: each next page is the key range up to the cursor's sort key (ADR 0097).
    if (scope === 'all') {
      // Every shard of the global listing and the unsharded partition, merged (ADR 0113).
      const page = await mergedIndexPage(
        this.db,
        this.table,
        {
          partitions: keys.auditListingPartitions,
          range,
          backwards: true,
          ...(filterExpression ? { filter: filterExpression } : {}),
        },
        limit,
        globalPosition(cursor),
      );
      return {
        items: page.items.map(readAuditRecord),
        nextCursor: encodeCursor(page.next ? { [attributes.gsi1sk]: page.next } : undefined),
      };
    }
    const partition = keys.auditPartition(scope.workspaceId);
    const page = await listingPage(
      this.db,
      this.table,
      { partition, range, backwards: true },
      limit,
      cursor,
      { [attributes.pk]: { equals: partition }, [attributes.sk]: true },
      options,
    );
    return { items: page.items.map(readAuditRecord), nextCursor: page.nextCursor };
  }

  /**
   * Tallies a refusal (ADR 0109): the first of its kind in its window writes its record and the
   * window's tally together; a later one counts itself on both, conditioned on the count it read
   * (optimistic, retried when another refusal of the kind won). Puts only, on the audit partition:
   * what every mutating route may write (ADR 0094); the tally is read with GetItem.
   */
  async recordRefusal(refusal: Refusal): Promise<void> {
    const nowMs = this.now();
    const window = refusalWindow(nowMs);
    const kind = createHash('sha256').update(refusalKind(refusal)).digest('base64url');
    const tallyKey = keys.auditRefusalTally(refusal.workspaceId, kind, window);
    const tallyTtl = (window + 1) * REFUSAL_WINDOW_SECONDS + TALLY_TTL_SECONDS;
    for (let attempt = 0; attempt < TALLY_ATTEMPTS; attempt++) {
      // The first try assumes a first refusal (the usual case: one write); a lost race reads.
      const tally = attempt === 0 ? undefined : await getItem(this.db, this.table, tallyKey);
      const seen = typeof tally?.count === 'number' ? tally.count : 0;
      const record: Item = tally
        ? {
            ...(tally.record as Item),
            count: seen + 1,
            last_at: new Date(nowMs).toISOString(),
            last_request_id: refusal.requestId,
            expires_at_epoch: Math.floor(nowMs / 1000) + Math.round(this.retention.days * 86400),
          }
        : refusalItem(refusal, this.retention, nowMs);
      const { count: _count, last_at: _last, last_request_id: _lastId, ...first } = record;
      const written = await this.writeTally(
        {
          ...tallyKey,
          entity: entities.auditRefusalTally,
          count: seen + 1,
          record: first,
          expires_at_epoch: tallyTtl,
        },
        record,
        tally ? seen : undefined,
      );
      if (written) return;
    }
    throw new Error('refusal tally lost to concurrent refusals of its kind');
  }

  /** The tally and its record in one transaction; false when another refusal changed the tally first. */
  private async writeTally(tally: Item, record: Item, seen: number | undefined): Promise<boolean> {
    const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
      {
        Put: {
          TableName: this.table,
          Item: tally,
          ...(seen === undefined
            ? { ConditionExpression: itemAbsent }
            : {
                ConditionExpression: '#c = :seen',
                ExpressionAttributeNames: { '#c': 'count' },
                ExpressionAttributeValues: { ':seen': seen },
              }),
        },
      },
      {
        Put: {
          TableName: this.table,
          Item: record,
          ConditionExpression: seen === undefined ? itemAbsent : itemExists,
        },
      },
    ];
    try {
      await storeCall(() => this.db.send(new TransactWriteCommand({ TransactItems: items })), {
        onConditionFailed: () => new ConditionFailed(),
        onTransactionConflict: () => new ConditionFailed(),
      });
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }
}
