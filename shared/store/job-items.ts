/**
 * What the stores of the chunked background jobs share (mosaic harvest jobs, ADR 0136; tile cache
 * jobs, ADR 0139): a job item with a lock marker and a GSI1 entry while it is unfinished (one job
 * at a time per owner; resume after a restart), the fields every job item has, and the
 * transitions every job makes — a cancel request, queued → running, the finish that releases the
 * marker, and the scheduled sweep's restart (ADR 0093).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { StateConflictError } from '#domain/errors.ts';
import {
  JOB_STATUSES,
  type JobError,
  type JobRecord,
  type JobStatus,
  type JobTransitions,
} from '#domain/jobs.ts';
import type { Page } from '#domain/page.ts';
import type { StuckJobStore, SweepMark } from '#domain/sweeps.ts';
import { conditionalWrite } from './errors.ts';
import { DynamoRepository, indexCondition, queryInput, queryPages, queryPrefixPage } from './items.ts';
import { type Key, keys } from './keys.ts';
import { attributes, itemAbsent } from './table.ts';
import { type GuardedItem, putNew, transactOr, unguarded } from './transactions.ts';

type Item = Record<string, unknown>;

const WORKING: readonly JobStatus[] = ['queued', 'running'];

/** The decoder fields of the state every job item has (its status, cursor, version and times). */
export function jobStateShape() {
  return {
    status: z.enum(JOB_STATUSES),
    cancel_requested: z.boolean(),
    cursor: z.optional(z.string()),
    error: z.optional(z.looseObject({ reason: z.string(), message: z.string() })),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.optional(z.string()),
    finished_at: z.optional(z.string()),
  };
}

/** How one kind of job is stored. */
export interface JobItems<J extends JobRecord> {
  /** The job item's key (from the identity fields of a job or of its GSI1 entry). */
  key(job: J): Key;
  /** The marker that holds the owner (a mosaic, a workspace) while the job is unfinished. */
  lock(job: J): Key;
  /** The job's GSI1 entry while it is unfinished, and that entry's partition. */
  working(jobId: string): Item;
  workingPartition: string;
  entity: string;
  lockEntity: string;
  decode(item: Item): J;
  /** The 409 for a job created while `runningJobId` holds the marker. */
  running(runningJobId: string): StateConflictError;
}

/** The one DynamoDB implementation of the job transitions and of the sweep's side of a job store. */
export abstract class DynamoJobRepository<J extends JobRecord>
  extends DynamoRepository
  implements JobTransitions<J>, StuckJobStore<J>
{
  protected abstract readonly items: JobItems<J>;

  /**
   * Writes a queued job with its marker and GSI1 entry, with `guard` (the owner is still there) as
   * the transaction's third item: `guardFailed` when it fails, the 409 naming the job that holds
   * the marker.
   */
  protected async createLocked(job: J, guard: GuardedItem, guardFailed?: () => Error): Promise<void> {
    const locked = await transactOr(
      this.db,
      [
        putNew(this.table, {
          ...this.items.key(job),
          ...this.items.working(job.id),
          entity: this.items.entity,
          ...(job as Item),
        }),
        unguarded({
          Put: {
            TableName: this.table,
            Item: {
              ...this.items.lock(job),
              entity: this.items.lockEntity,
              job_id: job.id,
              created_at: job.created_at,
            },
            ConditionExpression: itemAbsent,
          },
        }),
        guard,
      ],
      (codes) => {
        if (guardFailed && codes[2] === 'ConditionalCheckFailed') throw guardFailed();
        return codes[1] === 'ConditionalCheckFailed' ? true : undefined;
      },
    );
    if (locked) throw this.items.running((await this.lockHolder(this.items.lock(job))) ?? 'unknown');
  }

  /** The id of the job whose marker is `lock`, if any. */
  protected async lockHolder(lock: Key): Promise<string | undefined> {
    const item = await this.get(lock);
    return typeof item?.job_id === 'string' ? item.job_id : undefined;
  }

  /** The job at `key`, decoded. */
  protected async findAt(key: Key): Promise<J | undefined> {
    const item = await this.get(key);
    return item ? this.items.decode(item) : undefined;
  }

  /** One page of the jobs under `prefix` in the workspace partition. */
  protected async listUnder(
    workspaceId: string,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<J>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      prefix,
      limit,
      cursor,
    );
    return { items: page.items.map((i) => this.items.decode(i)), nextCursor: page.nextCursor };
  }

  /** One conditional update of the job (its audit record rides along when it sets the status); false when the condition failed. */
  protected async conditional(job: J, update: Record<string, unknown>): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [unguarded({ Update: { TableName: this.table, Key: this.items.key(job), ...update } as never })],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  requestCancel(job: J, now: string): Promise<boolean> {
    return this.conditional(job, {
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
    });
  }

  markRunning(job: J, now: string): Promise<boolean> {
    return this.conditional(job, {
      UpdateExpression: 'SET #st = :running, #v = #v + :one, started_at = :now, updated_at = :now',
      ConditionExpression: '#st = :queued',
      ExpressionAttributeNames: { '#st': 'status', '#v': 'version' },
      ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued', ':one': 1, ':now': now },
    });
  }

  async finish(job: J, status: JobStatus, now: string, error?: JobError): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: this.items.key(job),
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
            Key: this.items.lock(job),
            ConditionExpression: 'attribute_not_exists(job_id) OR job_id = :id',
            ExpressionAttributeValues: { ':id': job.id },
          },
        }),
      ],
      (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
    );
    return !lost;
  }

  async working(fn: (job: J) => Promise<void>): Promise<void> {
    const found: Key[] = [];
    await queryPages(this.db, queryInput(this.table, indexCondition(this.items.workingPartition)), (page) => {
      // A GSI1 entry is the job item itself (the index projects every attribute): decoded, its
      // identity fields name the key read afresh below.
      for (const i of page) found.push(this.items.key(this.items.decode(i)));
      return true;
    });
    for (const key of found) {
      const job = await this.findAt(key);
      if (job && WORKING.includes(job.status)) await fn(job);
    }
  }

  async restart(job: J, mark: SweepMark, now: string): Promise<J | undefined> {
    const run = job.run ?? 1;
    // A plain update, no transaction: nothing a user sees changes, so no audit record and no event.
    const written = await conditionalWrite(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.items.key(job),
          // Still unfinished, in the run read and without progress since (updated_at unchanged);
          // the status and version stay.
          UpdateExpression: 'SET #run = :next, updated_at = :now, sweep = :mark',
          ConditionExpression: `#s IN (:queued, :running) AND updated_at = :seen AND ${
            run <= 1 ? '(attribute_not_exists(#run) OR #run = :prev)' : '#run = :prev'
          }`,
          ExpressionAttributeNames: { '#s': 'status', '#run': 'run' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':running': 'running',
            ':seen': job.updated_at,
            ':prev': run,
            ':next': run + 1,
            ':now': now,
            ':mark': mark,
          },
        }),
      ),
    );
    return written ? { ...job, run: run + 1, updated_at: now, sweep: mark } : undefined;
  }
}

/**
 * The condition that a chunk's commit finds the job where the chunk was read: its cursor is
 * `previous` (or it has none yet); adds `:prev` to `values`.
 */
export function cursorIs(previous: string | undefined, values: Record<string, unknown>): string {
  if (previous === undefined) return 'attribute_not_exists(#cur)';
  values[':prev'] = previous;
  return '#cur = :prev';
}
