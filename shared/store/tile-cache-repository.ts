import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
import { JOB_STATUSES, type JobStatus } from '#domain/jobs.ts';
import type { Page } from '#domain/page.ts';
import {
  CACHE_TYPES,
  CACHED_TILE_MATRIX_SET,
  type CacheEpochs,
  type CacheRecords,
  type CacheType,
  type WorkspaceTileCache,
} from '#domain/tile-cache.ts';
import {
  TILE_CACHE_JOB_TYPES,
  type TileCacheJob,
  type TileCacheJobRepository,
} from '#domain/tile-cache-jobs.ts';
import { decoder } from './decode.ts';
import { storeCall } from './errors.ts';
import { DynamoRepository, indexCondition, queryInput, queryPages, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { attributes, itemAbsent } from './table.ts';
import { putNew, transactOr, unguarded, workspaceIsActive } from './transactions.ts';

const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/**
 * The caches' records (ADR 0139): the global clear epochs (`GLOBAL`/`CACHEEPOCHS`) and each
 * workspace's tile cache record (`TILECACHE` in its partition: clear generation and usage). A
 * clear is a transaction (audited, an event); usage moves are plain updates (bookkeeping).
 */
export class DynamoCacheRecords extends DynamoRepository implements CacheRecords {
  async epochs(): Promise<CacheEpochs> {
    const item = await this.get(keys.cacheEpochs());
    const cleared: Partial<Record<CacheType, string>> = {};
    for (const t of CACHE_TYPES) {
      const at = item?.[`cleared_at_${t}`];
      if (typeof at === 'string') cleared[t] = at;
    }
    return {
      epochs: Object.fromEntries(CACHE_TYPES.map((t) => [t, num(item?.[`epoch_${t}`])])) as Record<
        CacheType,
        number
      >,
      cleared_at: cleared,
    };
  }

  async bumpEpochs(types: readonly CacheType[], now: string): Promise<CacheEpochs> {
    const names: Record<string, string> = { '#v': 'version' };
    const sets = ['#v = if_not_exists(#v, :zero) + :one', 'entity = :e'];
    for (const t of types) {
      names[`#e_${t}`] = `epoch_${t}`;
      names[`#c_${t}`] = `cleared_at_${t}`;
      sets.push(`#e_${t} = if_not_exists(#e_${t}, :zero) + :one`, `#c_${t} = :now`);
    }
    await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.cacheEpochs(),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':e': entities.cacheEpochs, ':now': now },
          },
        }),
      ],
      () => undefined,
    );
    return this.epochs();
  }

  async workspace(workspaceId: string): Promise<WorkspaceTileCache> {
    const item = await this.get(keys.workspaceTileCache(workspaceId));
    return {
      workspace_id: workspaceId,
      generation: num(item?.generation),
      entries: Math.max(0, num(item?.entries)),
      bytes: Math.max(0, num(item?.bytes)),
      ...(typeof item?.cleared_at === 'string' ? { cleared_at: item.cleared_at } : {}),
      version: num(item?.version),
    };
  }

  async bumpWorkspace(workspaceId: string, now: string): Promise<WorkspaceTileCache> {
    await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.workspaceTileCache(workspaceId),
            UpdateExpression:
              'SET generation = if_not_exists(generation, :zero) + :one, #v = if_not_exists(#v, :zero) + :one, cleared_at = :now, entity = :e, workspace_id = :ws',
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: {
              ':zero': 0,
              ':one': 1,
              ':now': now,
              ':e': entities.tileCache,
              ':ws': workspaceId,
            },
          },
        }),
        workspaceIsActive(this.table, workspaceId),
      ],
      (codes) => {
        if (codes[1] === 'ConditionalCheckFailed')
          throw new NotFoundError('workspace_not_found', `Workspace '${workspaceId}' not found.`);
        return undefined;
      },
    );
    return this.workspace(workspaceId);
  }

  async addUsage(workspaceId: string, entries: number, bytes: number): Promise<void> {
    await storeCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.workspaceTileCache(workspaceId),
          UpdateExpression: 'ADD entries :n, #b :b SET entity = :e, workspace_id = :ws',
          ExpressionAttributeNames: { '#b': 'bytes' },
          ExpressionAttributeValues: {
            ':n': entries,
            ':b': bytes,
            ':e': entities.tileCache,
            ':ws': workspaceId,
          },
        }),
      ),
    );
  }
}

const WORKING: readonly JobStatus[] = ['queued', 'running'];

/** Decodes a stored job; an item that isn't one is a clear error, never an unchecked cast. */
export const toJob = /* @__PURE__ */ decoder<TileCacheJob>(
  'tile cache job',
  () =>
    z.looseObject({
      id: z.string(),
      workspace_id: z.string(),
      type: z.enum(TILE_CACHE_JOB_TYPES),
      tile_matrix_set: z.literal(CACHED_TILE_MATRIX_SET),
      layers: z.array(z.looseObject({ id: z.string(), public_id: z.string(), service_id: z.string() })),
      zoom_min: z.number(),
      zoom_max: z.number(),
      bbox: z.optional(z.tuple([z.number(), z.number(), z.number(), z.number()])),
      status: z.enum(JOB_STATUSES),
      cancel_requested: z.boolean(),
      cursor: z.optional(z.string()),
      error: z.optional(z.looseObject({ reason: z.string(), message: z.string() })),
      version: z.number(),
      created_at: z.string(),
      updated_at: z.string(),
      started_at: z.optional(z.string()),
      finished_at: z.optional(z.string()),
      tiles_total: z.optional(z.number()),
      tiles_done: z.number(),
      tiles_rendered: z.number(),
      tiles_skipped: z.number(),
      tiles_removed: z.number(),
      bytes_written: z.number(),
      bytes_removed: z.number(),
    }),
  { tag: entities.tileCacheJob },
);

/**
 * Tile cache jobs (ADR 0139): a `TILEJOB#<job>` item in the workspace partition, a `TILEJOBLOCK`
 * marker while one is unfinished, a GSI1 entry while it is unfinished (resume after a restart).
 */
export class DynamoTileCacheJobRepository extends DynamoRepository implements TileCacheJobRepository {
  async create(job: TileCacheJob): Promise<void> {
    const locked = await transactOr(
      this.db,
      [
        putNew(this.table, {
          ...keys.tileCacheJob(job.workspace_id, job.id),
          ...keys.tileCacheJobWorking(job.id),
          entity: entities.tileCacheJob,
          ...job,
        }),
        unguarded({
          Put: {
            TableName: this.table,
            Item: {
              ...keys.tileCacheJobLock(job.workspace_id),
              entity: entities.tileCacheJobLock,
              job_id: job.id,
              created_at: job.created_at,
            },
            ConditionExpression: itemAbsent,
          },
        }),
        workspaceIsActive(this.table, job.workspace_id),
      ],
      (codes) => {
        if (codes[2] === 'ConditionalCheckFailed')
          throw new NotFoundError('workspace_not_found', `Workspace '${job.workspace_id}' not found.`);
        return codes[1] === 'ConditionalCheckFailed' ? true : undefined;
      },
    );
    if (locked) {
      const lock = await this.get(keys.tileCacheJobLock(job.workspace_id));
      const running = (lock?.job_id as string | undefined) ?? 'unknown';
      throw new StateConflictError(
        'tile_cache_job_running',
        `Tile cache job '${running}' of this workspace is not finished yet; cancel it or wait for it.`,
        { job_id: running },
      );
    }
  }

  async find(workspaceId: string, jobId: string): Promise<TileCacheJob | undefined> {
    const item = await this.get(keys.tileCacheJob(workspaceId, jobId));
    return item ? toJob(item) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<TileCacheJob>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.tileCacheJobPrefix,
      limit,
      cursor,
    );
    return { items: page.items.map(toJob), nextCursor: page.nextCursor };
  }

  /** One conditional update (its audit record rides along when it sets the status); false when the condition failed. */
  private async conditional(update: Record<string, unknown>): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [unguarded({ Update: { TableName: this.table, ...update } as never })],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  requestCancel(job: TileCacheJob, now: string): Promise<boolean> {
    return this.conditional({
      Key: keys.tileCacheJob(job.workspace_id, job.id),
      UpdateExpression: 'SET cancel_requested = :yes, #st = :status, #v = :next, updated_at = :now',
      ConditionExpression: '#v = :v AND #st IN (:queued, :running)',
      ExpressionAttributeNames: { '#st': 'status', '#v': 'version' },
      ExpressionAttributeValues: {
        ':yes': true,
        ':status': job.status,
        ':v': job.version,
        ':next': job.version + 1,
        ':now': now,
        ':queued': 'queued',
        ':running': 'running',
      },
    });
  }

  markRunning(job: TileCacheJob, now: string): Promise<boolean> {
    return this.conditional({
      Key: keys.tileCacheJob(job.workspace_id, job.id),
      UpdateExpression: 'SET #st = :running, #v = #v + :one, started_at = :now, updated_at = :now',
      ConditionExpression: '#st = :queued',
      ExpressionAttributeNames: { '#st': 'status', '#v': 'version' },
      ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued', ':one': 1, ':now': now },
    });
  }

  commitProgress(previous: TileCacheJob, next: TileCacheJob, now: string): Promise<boolean> {
    const fields = [
      'tiles_done',
      'tiles_rendered',
      'tiles_skipped',
      'tiles_removed',
      'bytes_written',
      'bytes_removed',
    ] as const;
    const values: Record<string, unknown> = {
      ':running': 'running',
      ':no': false,
      ':now': now,
      ':cur': next.cursor,
    };
    const sets = ['updated_at = :now', '#cur = :cur'];
    for (const f of fields) {
      values[`:${f}`] = next[f];
      sets.push(`${f} = :${f}`);
    }
    let condition = '#st = :running AND cancel_requested = :no';
    if (previous.cursor === undefined) condition += ' AND attribute_not_exists(#cur)';
    else {
      values[':prev'] = previous.cursor;
      condition += ' AND #cur = :prev';
    }
    return this.conditional({
      Key: keys.tileCacheJob(previous.workspace_id, previous.id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#st': 'status', '#cur': 'cursor' },
      ExpressionAttributeValues: values,
    });
  }

  async finish(
    job: TileCacheJob,
    status: JobStatus,
    now: string,
    error?: { reason: string; message: string },
  ): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.tileCacheJob(job.workspace_id, job.id),
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
            Key: keys.tileCacheJobLock(job.workspace_id),
            ConditionExpression: 'attribute_not_exists(job_id) OR job_id = :id',
            ExpressionAttributeValues: { ':id': job.id },
          },
        }),
      ],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  async runningJob(workspaceId: string): Promise<string | undefined> {
    const lock = await this.get(keys.tileCacheJobLock(workspaceId));
    return typeof lock?.job_id === 'string' ? lock.job_id : undefined;
  }

  async working(fn: (job: TileCacheJob) => Promise<void>): Promise<void> {
    const found: { workspace_id: string; id: string }[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, indexCondition(keys.tileCacheJobWorkingPartition)),
      (items) => {
        for (const i of items) found.push({ workspace_id: i.workspace_id as string, id: i.id as string });
        return true;
      },
    );
    for (const f of found) {
      const job = await this.find(f.workspace_id, f.id);
      if (job && WORKING.includes(job.status)) await fn(job);
    }
  }
}
