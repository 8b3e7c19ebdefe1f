import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { RuleViolationError } from '#domain/errors.ts';
import type { ImportUsage } from '#domain/import-plans.ts';
import {
  eventOf,
  IMPORT_PHASES,
  IMPORT_STATUSES,
  type ImportEvent,
  type ImportJob,
  type ImportProgress,
  type ImportRepository,
  type ImportStatus,
  isEventWorthy,
  type NameClash,
  WORKING_STATUSES,
} from '#domain/imports.ts';
import type { Page } from '#domain/page.ts';
import { decoder, record, text } from './decode.ts';
import { conditionalWrite } from './errors.ts';
import {
  DynamoRepository,
  indexCondition,
  keyCondition,
  queryInput,
  queryPages,
  queryPrefixPage,
} from './items.ts';
import { entities, keys } from './keys.ts';
import { summaryChangeOf } from './summary-counters.ts';
import {
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  versionIs,
  workspaceIsActive,
} from './transactions.ts';

/** A name clash as a job and its events record it (ADR 0126). */
const clashes = () =>
  z.optional(
    z.array(
      z.looseObject({
        kind: text<NameClash['kind']>(),
        name: z.string(),
        proposed: z.string(),
        source_layer: z.optional(z.string()),
        renamed: z.optional(z.boolean()),
      }) satisfies z.ZodMiniType<NameClash>,
    ),
  );

/** A stored import job; its plan, discovery and requested names are checked as objects (the domain reads them). */
export const toJob = /* @__PURE__ */ decoder<ImportJob>('import job', () =>
  z.looseObject({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    source_kind: text<ImportJob['source_kind']>(),
    source_filename: z.optional(z.string()),
    source_uri: z.optional(z.string()),
    source_location: z.string(),
    source_etag: z.optional(z.string()),
    status: z.enum(IMPORT_STATUSES),
    phase: z.enum(IMPORT_PHASES),
    plan: z.optional(record<NonNullable<ImportJob['plan']>>()),
    discovery: z.optional(record<NonNullable<ImportJob['discovery']>>()),
    service_name: z.string(),
    requested_layers: z.optional(z.array(record<NonNullable<ImportJob['requested_layers']>[number]>())),
    clashes: clashes(),
    service_id: z.optional(z.string()),
    rollback_operation_id: z.optional(z.string()),
    rollback_until: z.optional(z.string()),
    teardown_to: z.optional(text<NonNullable<ImportJob['teardown_to']>>()),
    auto_publish: z.boolean(),
    max_bytes: z.number(),
    upload_expires_at: z.optional(z.string()),
    processed_bytes: z.number(),
    processed_features: z.number(),
    processed_layers: z.number(),
    total_layers: z.number(),
    retry_count: z.number(),
    warnings: z.optional(z.array(z.string())),
    error_message: z.optional(z.string()),
    error_reason: z.optional(z.string()),
    reserved_rows: z.optional(z.number()),
    reserved_bytes: z.optional(z.number()),
    reload: z.optional(z.boolean()),
    run: z.number(),
    version: z.number(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.optional(z.string()),
    completed_at: z.optional(z.string()),
  }),
);

/** A stored history event of an import. */
export const toEvent = /* @__PURE__ */ decoder<ImportEvent>('import event', () =>
  z.looseObject({
    id: z.string(),
    import_id: z.string(),
    status: z.enum(IMPORT_STATUSES),
    phase: z.enum(IMPORT_PHASES),
    created_at: z.string(),
    processed_bytes: z.number(),
    processed_features: z.number(),
    processed_layers: z.number(),
    warnings: z.optional(z.array(z.string())),
    clashes: clashes(),
    error_message: z.optional(z.string()),
    error_reason: z.optional(z.string()),
  }),
);

/** The stored item of a job: its key, and the working-set index entry while a workflow owns it. */
function jobItem(job: ImportJob): Record<string, unknown> {
  return {
    ...keys.importJob(job.workspace_id, job.id),
    ...(WORKING_STATUSES.includes(job.status) ? keys.importWorking(job.id) : {}),
    entity: entities.importJob,
    ...job,
  };
}

/** The history event of the job's current version (a new item: events are never rewritten). */
function eventItem(table: string, job: ImportJob): GuardedItem {
  return {
    item: {
      Put: {
        TableName: table,
        Item: {
          ...keys.importEvent(job.workspace_id, job.id, job.version),
          entity: entities.importEvent,
          ...eventOf(job),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  };
}

const lostRace = concurrentModification('The import');

/** The store's refusal of a reservation past the workspace's quota (the domain explains it with the usage). */
const overQuota = () =>
  new RuleViolationError(
    'workspace_import_quota',
    "The workspace's imports have no room left in its import quota for this import.",
  );

/**
 * The change of the workspace's import usage that goes with replacing `previous` by `next` (its
 * reservation's difference), or undefined when it has none. A growing part is conditioned on the
 * usage staying within `quota` (ADR 0110): `usage <= quota - growth`, atomically with the job.
 */
function usageChange(
  table: string,
  previous: ImportJob,
  next: ImportJob,
  quota: ImportUsage | undefined,
): GuardedItem | undefined {
  const delta = {
    rows: (next.reserved_rows ?? 0) - (previous.reserved_rows ?? 0),
    bytes: (next.reserved_bytes ?? 0) - (previous.reserved_bytes ?? 0),
  };
  if (delta.rows === 0 && delta.bytes === 0) return undefined;
  const conditions: string[] = [];
  const values: Record<string, unknown> = {
    ':rows': delta.rows,
    ':bytes': delta.bytes,
    ':entity': entities.importUsage,
  };
  for (const part of ['rows', 'bytes'] as const) {
    if (delta[part] <= 0) continue;
    if (!quota) throw new Error('A growing import reservation needs the workspace quota.');
    const room = quota[part] - delta[part];
    if (room < 0) throw overQuota();
    conditions.push(`(attribute_not_exists(#${part}) OR #${part} <= :room_${part})`);
    values[`:room_${part}`] = room;
  }
  return {
    item: {
      Update: {
        TableName: table,
        Key: keys.importUsage(previous.workspace_id),
        UpdateExpression: 'SET entity = :entity ADD #rows :rows, #bytes :bytes',
        ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
        ExpressionAttributeNames: { '#rows': 'rows', '#bytes': 'bytes' },
        ExpressionAttributeValues: values,
      },
    },
    onConditionFailed: overQuota,
  };
}

/**
 * DynamoDB implementation of the import port (ADR 0083): a job is one item of its workspace's
 * partition, each history event another item beside it, written in the same transaction as the
 * change it records — so the history can't miss or invent a transition.
 */
export class DynamoImportRepository extends DynamoRepository implements ImportRepository {
  private event(job: ImportJob): GuardedItem {
    return eventItem(this.table, job);
  }

  async create(job: ImportJob): Promise<void> {
    await transact(this.db, [
      workspaceIsActive(this.table, job.workspace_id),
      putNew(this.table, jobItem(job)),
      this.event(job),
      ...summaryChangeOf(this.table, 'import', job, undefined, job),
    ]);
  }

  async find(workspaceId: string, id: string): Promise<ImportJob | undefined> {
    const item = await this.get(keys.importJob(workspaceId, id));
    return item ? toJob(item) : undefined;
  }

  async list(
    workspaceId: string,
    status: ImportStatus | undefined,
    limit: number,
    cursor?: string,
  ): Promise<Page<ImportJob>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.importJobPrefix,
      limit,
      cursor,
      status
        ? { filter: { expression: '#s = :s', names: { '#s': 'status' }, values: { ':s': status } } }
        : {},
    );
    return {
      items: page.items.map(toJob),
      nextCursor: page.nextCursor,
    };
  }

  async history(workspaceId: string, id: string, limit: number, cursor?: string): Promise<Page<ImportEvent>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.importEventPrefix(id),
      limit,
      cursor,
    );
    return {
      items: page.items.map(toEvent),
      nextCursor: page.nextCursor,
    };
  }

  async save(previous: ImportJob, next: ImportJob, quota?: ImportUsage): Promise<void> {
    const put: GuardedItem = {
      item: { Put: { TableName: this.table, Item: jobItem(next), ...versionIs(previous.version) } },
      onConditionFailed: lostRace,
    };
    const usage = usageChange(this.table, previous, next, quota);
    await transact(
      this.db,
      [
        put,
        ...(isEventWorthy(previous, next) ? [this.event(next)] : []),
        ...(usage ? [usage] : []),
        // The summary counts imports by status (ADR 0137): a transition moves the job's count.
        ...summaryChangeOf(this.table, 'import', next, previous, next),
      ],
      lostRace,
    );
  }

  async usage(workspaceId: string): Promise<ImportUsage> {
    const item = await this.get(keys.importUsage(workspaceId));
    const count = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);
    return { rows: count(item?.rows), bytes: count(item?.bytes) };
  }

  progress(job: ImportJob, progress: ImportProgress & { warnings?: string[] }): Promise<boolean> {
    return conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.importJob(job.workspace_id, job.id),
          UpdateExpression:
            'SET processed_bytes = :b, processed_features = :f, processed_layers = :l, total_layers = :t, updated_at = :u',
          ConditionExpression: '#run = :run AND #s = :s',
          ExpressionAttributeNames: { '#run': 'run', '#s': 'status' },
          ExpressionAttributeValues: {
            ':b': progress.processed_bytes,
            ':f': progress.processed_features,
            ':l': progress.processed_layers,
            ':t': progress.total_layers,
            ':u': new Date().toISOString(),
            ':run': job.run,
            ':s': job.status,
          },
        }),
      ),
    );
  }

  async findByService(workspaceId: string, serviceId: string): Promise<ImportJob | undefined> {
    return this.firstWhere(workspaceId, (job) => job.service_id === serviceId);
  }

  async firstWhere(workspaceId: string, test: (job: ImportJob) => boolean): Promise<ImportJob | undefined> {
    let found: ImportJob | undefined;
    await queryPages(
      this.db,
      queryInput(
        this.table,
        keyCondition(keys.workspacePartition(workspaceId), { prefix: keys.importJobPrefix }),
        {
          consistent: true,
        },
      ),
      (items) => {
        found = items.map(toJob).find(test);
        return found === undefined;
      },
    );
    return found;
  }

  async working(fn: (job: ImportJob) => Promise<void>): Promise<void> {
    const found: { workspace_id: string; id: string }[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, indexCondition(keys.importWorkingPartition)),
      (items) => {
        for (const i of items) found.push({ workspace_id: i.workspace_id as string, id: i.id as string });
        return true;
      },
    );
    for (const f of found) {
      const job = await this.find(f.workspace_id, f.id);
      if (job && WORKING_STATUSES.includes(job.status)) await fn(job);
    }
  }
}
