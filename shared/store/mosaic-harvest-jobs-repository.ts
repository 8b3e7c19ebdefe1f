import * as z from 'zod/mini';
import { StateConflictError } from '#domain/errors.ts';
import {
  HARVEST_JOB_STATUSES,
  type HarvestChunk,
  type HarvestJob,
  type HarvestJobRepository,
  type HarvestJobStatus,
} from '#domain/mosaic-harvest-jobs.ts';
import type { Granule } from '#domain/mosaics.ts';
import type { Page } from '#domain/page.ts';
import type { Service } from '#domain/services.ts';
import { decoder, text } from './decode.ts';
import { DynamoRepository, indexCondition, queryInput, queryPages, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { attributes, itemAbsent, itemExists } from './table.ts';
import { type GuardedItem, putNew, transactOr, unguarded, workspaceIsActive } from './transactions.ts';

const WORKING: readonly HarvestJobStatus[] = ['queued', 'running'];

/** Decodes a stored job; an item that isn't one is a clear error, never an unchecked cast. */
export const toJob = /* @__PURE__ */ decoder<HarvestJob>(
  'mosaic harvest job',
  () =>
    z.looseObject({
      id: z.string(),
      workspace_id: z.string(),
      service_id: z.string(),
      status: z.enum(HARVEST_JOB_STATUSES),
      phase: text<HarvestJob['phase']>(),
      pattern: z.string(),
      remove_missing: z.boolean(),
      cancel_requested: z.boolean(),
      cursor: z.optional(z.string()),
      // Absent on jobs stored before failures were listed: none.
      failures: z._default(
        z.array(z.looseObject({ path: z.string(), reason: z.string(), message: z.string() })),
        () => [],
      ),
      generation: z.optional(z.number()),
      error: z.optional(z.looseObject({ reason: z.string(), message: z.string() })),
      version: z.number(),
      created_at: z.string(),
      updated_at: z.string(),
      started_at: z.optional(z.string()),
      finished_at: z.optional(z.string()),
      files_scanned: z.number(),
      files_total: z.optional(z.number()),
      granules_added: z.number(),
      granules_removed: z.number(),
      files_skipped: z.number(),
      files_failed: z.number(),
    }),
  { tag: entities.mosaicHarvestJob },
);

/** The attributes of a job a chunk or a transition rewrites (everything but its identity). */
function jobFields(job: HarvestJob) {
  const { id: _i, workspace_id: _w, service_id: _s, created_at: _c, ...rest } = job;
  return rest;
}

/**
 * DynamoDB implementation of the harvest-job port (ADR 0136): a `HARVESTJOB#<service>#<job>` item
 * in the workspace partition, a `HARVESTLOCK#<service>` marker while the job is unfinished (one at a
 * time per mosaic), a GSI1 entry while it is unfinished (resume after a restart). A chunk is one
 * transaction: the job's cursor and counters, the mosaic's generation and the chunk's granules.
 */
export class DynamoHarvestJobRepository extends DynamoRepository implements HarvestJobRepository {
  async create(job: HarvestJob, service: Service): Promise<void> {
    const locked = await transactOr(
      this.db,
      [
        putNew(this.table, {
          ...keys.mosaicHarvestJob(job.workspace_id, job.service_id, job.id),
          ...keys.mosaicHarvestWorking(job.id),
          entity: entities.mosaicHarvestJob,
          ...job,
        }),
        unguarded({
          Put: {
            TableName: this.table,
            Item: {
              ...keys.mosaicHarvestLock(job.workspace_id, job.service_id),
              entity: entities.mosaicHarvestLock,
              job_id: job.id,
              created_at: job.created_at,
            },
            ConditionExpression: itemAbsent,
          },
        }),
        this.serviceCheck(service),
      ],
      (codes) => (codes[1] === 'ConditionalCheckFailed' ? true : undefined),
    );
    if (locked) {
      const lock = await this.get(keys.mosaicHarvestLock(job.workspace_id, job.service_id));
      const running = (lock?.job_id as string | undefined) ?? 'unknown';
      throw new StateConflictError(
        'harvest_job_running',
        `Harvest job '${running}' of this mosaic is not finished yet; cancel it or wait for it.`,
        { job_id: running },
      );
    }
  }

  async find(workspaceId: string, serviceId: string, jobId: string): Promise<HarvestJob | undefined> {
    const item = await this.get(keys.mosaicHarvestJob(workspaceId, serviceId, jobId));
    return item ? toJob(item) : undefined;
  }

  async list(
    workspaceId: string,
    serviceId: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<HarvestJob>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.mosaicHarvestJobPrefix(serviceId),
      limit,
      cursor,
    );
    return { items: page.items.map(toJob), nextCursor: page.nextCursor };
  }

  async requestCancel(job: HarvestJob, now: string): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.mosaicHarvestJob(job.workspace_id, job.service_id, job.id),
            UpdateExpression: 'SET cancel_requested = :yes, #st = :status, #v = :next, updated_at = :now',
            ConditionExpression: '#v = :v AND #st IN (:queued, :running)',
            ExpressionAttributeNames: { '#st': 'status', '#v': 'version' },
            ExpressionAttributeValues: {
              ':yes': true,
              // The status it has (the version condition holds it): the audit records the request.
              ':status': job.status,
              ':v': job.version,
              ':next': job.version + 1,
              ':now': now,
              ':queued': 'queued',
              ':running': 'running',
            },
          },
        }),
      ],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  async markRunning(job: HarvestJob, now: string): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.mosaicHarvestJob(job.workspace_id, job.service_id, job.id),
            UpdateExpression: 'SET #st = :running, #v = #v + :one, started_at = :now, updated_at = :now',
            ConditionExpression: '#st = :queued',
            ExpressionAttributeNames: { '#st': 'status', '#v': 'version' },
            ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued', ':one': 1, ':now': now },
          },
        }),
      ],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  async commitChunk(
    job: HarvestJob,
    chunk: HarvestChunk,
    now: string,
  ): Promise<'ok' | 'job_changed' | 'generation_moved'> {
    const { cursor, ...fields } = jobFields(chunk.next);
    const values: Record<string, unknown> = {
      ':running': 'running',
      ':phase': chunk.phase,
      ':no': false,
      ':now': now,
    };
    const names: Record<string, string> = { '#st': 'status', '#ph': 'phase', '#cur': 'cursor' };
    const sets: string[] = ['updated_at = :now'];
    for (const [name, value] of Object.entries(fields)) {
      if (['status', 'version', 'updated_at', 'cancel_requested'].includes(name) || value === undefined)
        continue;
      names[`#f_${name}`] = name;
      values[`:f_${name}`] = value;
      sets.push(`#f_${name} = :f_${name}`);
    }
    if (cursor !== undefined) {
      values[':cur'] = cursor;
      sets.push('#cur = :cur');
    }
    let condition = '#st = :running AND #ph = :phase AND cancel_requested = :no';
    if (chunk.previous === undefined) condition += ' AND attribute_not_exists(#cur)';
    else {
      values[':prev'] = chunk.previous;
      condition += ' AND #cur = :prev';
    }
    const items: GuardedItem[] = [
      unguarded({
        Update: {
          TableName: this.table,
          Key: keys.mosaicHarvestJob(job.workspace_id, job.service_id, job.id),
          UpdateExpression: `SET ${sets.join(', ')}${cursor === undefined ? ' REMOVE #cur' : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      }),
    ];
    if (chunk.add) items.push(...this.addItems(chunk.add.service, chunk.add.base, chunk.add.granules, now));
    if (chunk.remove) {
      items.push(...this.removeItems(chunk.remove.service, chunk.remove.base, chunk.remove.granuleIds, now));
    }
    // Granules land only in an active workspace: a workspace deletion (whose services stay active
    // until its sweep reaches them) must not get granules behind its sweep (ADR 0136).
    const workspaceAt = items.length;
    if (chunk.add || chunk.remove) items.push(workspaceIsActive(this.table, job.workspace_id));
    const answer = await transactOr<'job_changed' | 'generation_moved'>(this.db, items, (codes) => {
      if (codes[0] === 'ConditionalCheckFailed') return 'job_changed';
      if (codes[workspaceAt] === 'ConditionalCheckFailed') {
        throw new StateConflictError('service_not_found', 'The mosaic service no longer exists.');
      }
      if (codes[1] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict'))
        return 'generation_moved';
      // A granule already removed by another writer: the generation moved under us too.
      if (chunk.remove && codes.slice(3, workspaceAt).includes('ConditionalCheckFailed'))
        return 'generation_moved';
      if (codes[2] === 'ConditionalCheckFailed') {
        throw new StateConflictError('service_not_found', 'The mosaic service no longer exists.');
      }
      return undefined;
    });
    return answer ?? 'ok';
  }

  /** The generation flip to base+1 with the granules (the mosaic item and the service check first). */
  private addItems(
    service: Service,
    base: { generation: number; granule_count: number },
    granules: Granule[],
    now: string,
  ) {
    const first = base.generation === 0;
    return [
      unguarded({
        Update: {
          TableName: this.table,
          Key: keys.mosaic(service.workspace_id, service.id),
          UpdateExpression:
            'SET #g = :next, granule_count = :count, updated_at = :now, entity = :e, service_id = :sid',
          ConditionExpression: first ? itemAbsent : '#g = :g',
          ExpressionAttributeNames: { '#g': 'generation' },
          ExpressionAttributeValues: {
            ':next': base.generation + 1,
            ':count': base.granule_count + granules.length,
            ':now': now,
            ':e': entities.mosaic,
            ':sid': service.id,
            ...(first ? {} : { ':g': base.generation }),
          },
        },
      }),
      this.serviceCheck(service),
      ...granules.map((g) =>
        putNew(this.table, {
          ...keys.mosaicGranule(g.workspace_id, g.service_id, g.id),
          entity: entities.mosaicGranule,
          ...g,
        }),
      ),
    ];
  }

  /** The generation flip to base+1 without the granules; the count stays at least 1. */
  private removeItems(
    service: Service,
    base: { generation: number; granule_count: number },
    granuleIds: string[],
    now: string,
  ) {
    const next = base.generation + 1;
    return [
      unguarded({
        Update: {
          TableName: this.table,
          Key: keys.mosaic(service.workspace_id, service.id),
          UpdateExpression: 'SET #g = :next, granule_count = granule_count - :k, updated_at = :now',
          ConditionExpression: '#g = :g AND granule_count > :k',
          ExpressionAttributeNames: { '#g': 'generation' },
          ExpressionAttributeValues: {
            ':next': next,
            ':g': base.generation,
            ':k': granuleIds.length,
            ':now': now,
          },
        },
      }),
      this.serviceCheck(service),
      ...granuleIds.map((id) =>
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.mosaicGranule(service.workspace_id, service.id, id),
            UpdateExpression: 'SET removed_generation = :next',
            ConditionExpression: `${itemExists} AND attribute_not_exists(removed_generation)`,
            ExpressionAttributeValues: { ':next': next },
          },
        }),
      ),
    ];
  }

  private serviceCheck(service: Service) {
    return unguarded({
      ConditionCheck: {
        TableName: this.table,
        Key: keys.service(service.workspace_id, service.id),
        ConditionExpression: '#st = :active AND #ty = :mosaic',
        ExpressionAttributeNames: { '#st': 'status', '#ty': 'type' },
        ExpressionAttributeValues: { ':active': 'active', ':mosaic': 'raster_mosaic' },
      },
    });
  }

  async finish(
    job: HarvestJob,
    status: HarvestJobStatus,
    now: string,
    error?: { reason: string; message: string },
  ): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.mosaicHarvestJob(job.workspace_id, job.service_id, job.id),
            UpdateExpression: `SET #st = :status, #v = #v + :one, finished_at = :now, updated_at = :now${
              error ? ', #err = :err' : ''
            } REMOVE ${attributes.gsi1pk}, ${attributes.gsi1sk}`,
            ConditionExpression: '#st IN (:queued, :running)',
            ExpressionAttributeNames: {
              '#st': 'status',
              '#v': 'version',
              ...(error ? { '#err': 'error' } : {}),
            },
            ExpressionAttributeValues: {
              ':status': status,
              ':one': 1,
              ':now': now,
              ':queued': 'queued',
              ':running': 'running',
              ...(error ? { ':err': error } : {}),
            },
          },
        }),
        unguarded({
          Delete: {
            TableName: this.table,
            Key: keys.mosaicHarvestLock(job.workspace_id, job.service_id),
            ConditionExpression: 'attribute_not_exists(job_id) OR job_id = :id',
            ExpressionAttributeValues: { ':id': job.id },
          },
        }),
      ],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  async working(fn: (job: HarvestJob) => Promise<void>): Promise<void> {
    const found: { workspace_id: string; service_id: string; id: string }[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, indexCondition(keys.mosaicHarvestWorkingPartition)),
      (items) => {
        for (const i of items) {
          found.push({
            workspace_id: i.workspace_id as string,
            service_id: i.service_id as string,
            id: i.id as string,
          });
        }
        return true;
      },
    );
    for (const f of found) {
      const job = await this.find(f.workspace_id, f.service_id, f.id);
      if (job && WORKING.includes(job.status)) await fn(job);
    }
  }
}
