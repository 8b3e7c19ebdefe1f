import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { NotFoundError, StateConflictError } from '#domain/errors.ts';
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
import { DynamoRepository } from './items.ts';
import { cursorIs, DynamoJobRepository, type JobItems, jobStateShape } from './job-items.ts';
import { entities, keys } from './keys.ts';
import { transactOr, unguarded, workspaceIsActive } from './transactions.ts';

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
      ...jobStateShape(),
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
export class DynamoTileCacheJobRepository
  extends DynamoJobRepository<TileCacheJob>
  implements TileCacheJobRepository
{
  protected readonly items: JobItems<TileCacheJob> = {
    key: (j) => keys.tileCacheJob(j.workspace_id, j.id),
    lock: (j) => keys.tileCacheJobLock(j.workspace_id),
    working: keys.tileCacheJobWorking,
    workingPartition: keys.tileCacheJobWorkingPartition,
    entity: entities.tileCacheJob,
    lockEntity: entities.tileCacheJobLock,
    decode: toJob,
    running: (id) =>
      new StateConflictError(
        'tile_cache_job_running',
        `Tile cache job '${id}' of this workspace is not finished yet; cancel it or wait for it.`,
        { job_id: id },
      ),
  };

  create(job: TileCacheJob): Promise<void> {
    return this.createLocked(
      job,
      workspaceIsActive(this.table, job.workspace_id),
      () => new NotFoundError('workspace_not_found', `Workspace '${job.workspace_id}' not found.`),
    );
  }

  find(workspaceId: string, jobId: string): Promise<TileCacheJob | undefined> {
    return this.findAt(keys.tileCacheJob(workspaceId, jobId));
  }

  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<TileCacheJob>> {
    return this.listUnder(workspaceId, keys.tileCacheJobPrefix, limit, cursor);
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
    const condition = `#st = :running AND cancel_requested = :no AND ${cursorIs(previous.cursor, values)}`;
    return this.conditional(previous, {
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#st': 'status', '#cur': 'cursor' },
      ExpressionAttributeValues: values,
    });
  }

  runningJob(workspaceId: string): Promise<string | undefined> {
    return this.lockHolder(keys.tileCacheJobLock(workspaceId));
  }
}
