import * as z from 'zod/mini';
import { StateConflictError } from '#domain/errors.ts';
import type { HarvestChunk, HarvestJob, HarvestJobRepository } from '#domain/mosaic-harvest-jobs.ts';
import type { MosaicState } from '#domain/mosaics.ts';
import type { Page } from '#domain/page.ts';
import type { Service } from '#domain/services.ts';
import { decoder, text } from './decode.ts';
import { cursorIs, DynamoJobRepository, type JobItems, jobStateShape } from './job-items.ts';
import { entities, keys } from './keys.ts';
import {
  addedGeneration,
  mosaicServiceCheck,
  removedGranule,
  shrunkGeneration,
} from './mosaics-repository.ts';
import { type GuardedItem, transactOr, unguarded, workspaceIsActive } from './transactions.ts';

/** Decodes a stored job; an item that isn't one is a clear error, never an unchecked cast. */
export const toJob = /* @__PURE__ */ decoder<HarvestJob>(
  'mosaic harvest job',
  () =>
    z.looseObject({
      id: z.string(),
      workspace_id: z.string(),
      service_id: z.string(),
      phase: text<HarvestJob['phase']>(),
      pattern: z.string(),
      remove_missing: z.boolean(),
      // Absent on jobs stored before failures were listed: none.
      failures: z._default(
        z.array(z.looseObject({ path: z.string(), reason: z.string(), message: z.string() })),
        () => [],
      ),
      generation: z.optional(z.number()),
      ...jobStateShape(),
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
export class DynamoHarvestJobRepository
  extends DynamoJobRepository<HarvestJob>
  implements HarvestJobRepository
{
  protected readonly items: JobItems<HarvestJob> = {
    key: (j) => keys.mosaicHarvestJob(j.workspace_id, j.service_id, j.id),
    lock: (j) => keys.mosaicHarvestLock(j.workspace_id, j.service_id),
    working: keys.mosaicHarvestWorking,
    workingPartition: keys.mosaicHarvestWorkingPartition,
    entity: entities.mosaicHarvestJob,
    lockEntity: entities.mosaicHarvestLock,
    decode: toJob,
    running: (id) =>
      new StateConflictError(
        'harvest_job_running',
        `Harvest job '${id}' of this mosaic is not finished yet; cancel it or wait for it.`,
        { job_id: id },
      ),
  };

  create(job: HarvestJob, service: Service): Promise<void> {
    return this.createLocked(job, mosaicServiceCheck(this.table, service));
  }

  find(workspaceId: string, serviceId: string, jobId: string): Promise<HarvestJob | undefined> {
    return this.findAt(keys.mosaicHarvestJob(workspaceId, serviceId, jobId));
  }

  list(workspaceId: string, serviceId: string, limit: number, cursor?: string): Promise<Page<HarvestJob>> {
    return this.listUnder(workspaceId, keys.mosaicHarvestJobPrefix(serviceId), limit, cursor);
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
    const condition = `#st = :running AND #ph = :phase AND cancel_requested = :no AND ${cursorIs(chunk.previous, values)}`;
    const items: GuardedItem[] = [
      unguarded({
        Update: {
          TableName: this.table,
          Key: this.items.key(job),
          UpdateExpression: `SET ${sets.join(', ')}${cursor === undefined ? ' REMOVE #cur' : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      }),
    ];
    if (chunk.add)
      items.push(...addedGeneration(this.table, chunk.add.service, chunk.add.base, chunk.add.granules, now));
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

  /** The generation flip to base+1 without the granules (the mosaic item and the service check first). */
  private removeItems(service: Service, base: MosaicState, granuleIds: string[], now: string) {
    return [
      shrunkGeneration(this.table, service, base, granuleIds.length, now),
      mosaicServiceCheck(this.table, service),
      ...granuleIds.map((id) => removedGranule(this.table, service, id, base.generation + 1)),
    ];
  }
}
