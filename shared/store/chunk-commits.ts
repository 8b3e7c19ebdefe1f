/**
 * The DynamoDB side of the chunked-workflow engine (ADR 0080): the operation item's fenced
 * transitions, the checkpoint committed in one write with the chunk's releases, consistent reads
 * of a phase's items in key order, and the write units every write adds to the operation.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  ChunkCommit,
  ChunkPort,
  OperationLedger,
  Release,
  WorkflowOperation,
} from '#domain/chunked-workflow.ts';
import { UnavailableError } from '#domain/errors.ts';
import { TransientError } from '#domain/workflows.ts';
import type { StoreClient } from './client.ts';
import { ConditionFailed, storeCall } from './errors.ts';
import { getItem, keyCondition, queryInput, queryPage, queryPages, writeUnits } from './items.ts';
import type { Key } from './keys.ts';
import { attributes, itemExists } from './table.ts';
import { type TransactItem, transact, transactOr, unguarded } from './transactions.ts';

type Item = Record<string, unknown>;

/** Runs store calls (already translated) so that an outage is a TransientError, retried by the workflow. */
export async function transient<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnavailableError) throw new TransientError(error.message);
    throw error;
  }
}

/** Write units consumed since the last operation update (added at the next one). */
export class WriteUnits {
  private pending = 0;
  add(units: number): void {
    this.pending += units;
  }
  take(): number {
    const units = this.pending;
    this.pending = 0;
    return units;
  }
}

/** Where an operation item lives and what the engine may do to it. */
export interface LedgerTable<Op> {
  db: StoreClient;
  table: string;
  key: (id: string) => Key;
  read: (item: Item) => Op;
  units: WriteUnits;
  /** Written with the failure (e.g. a counter the operation held). */
  failureItems?: (op: Op) => TransactItem[];
  /** Attributes the failure removes from the operation item (an index only active work is on). */
  failureRemoves?: string;
}

/** The operation item as the engine's ledger. */
export class DynamoOperationLedger<Op extends WorkflowOperation> implements OperationLedger<Op> {
  constructor(protected readonly t: LedgerTable<Op>) {}

  async load(id: string): Promise<Op | undefined> {
    const item = await getItem(this.t.db, this.t.table, this.t.key(id));
    return item ? this.t.read(item) : undefined;
  }

  async markRunning(id: string, attempt: number): Promise<boolean> {
    // A transaction, so the status change has its audit record and event (ADR 0094).
    const refused = await transient(() =>
      transactOr(
        this.t.db,
        [
          unguarded({
            Update: {
              TableName: this.t.table,
              Key: this.t.key(id),
              UpdateExpression: 'SET #s = :running, updated_at = :now',
              ConditionExpression: '#s IN (:pending, :running) AND attempt_count = :attempt',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':running': 'running',
                ':pending': 'pending',
                ':attempt': attempt,
                ':now': new Date().toISOString(),
              },
            },
          }),
        ],
        (codes) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined),
      ),
    );
    return refused !== true;
  }

  async advance(op: Op, next: Op['phase']): Promise<void> {
    const units = this.t.units.take();
    await transient(() =>
      storeCall(
        () =>
          this.t.db.send(
            new UpdateCommand({
              TableName: this.t.table,
              Key: this.t.key(op.id),
              UpdateExpression:
                'SET phase = :next, updated_at = :now, write_units = if_not_exists(write_units, :zero) + :w REMOVE checkpoint_from, checkpoint_to',
              ConditionExpression: 'phase = :phase AND #s = :running',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':next': next,
                ':phase': op.phase,
                ':running': 'running',
                ':now': new Date().toISOString(),
                ':zero': 0,
                ':w': units,
              },
            }),
          ),
        { onConditionFailed: () => new TransientError('Another runner advanced this deletion; resuming.') },
      ),
    );
  }

  async settle(id: string): Promise<void> {
    const units = this.t.units.take();
    if (units === 0) return;
    await transient(() =>
      storeCall(() =>
        this.t.db.send(
          new UpdateCommand({
            TableName: this.t.table,
            Key: this.t.key(id),
            UpdateExpression: 'SET write_units = if_not_exists(write_units, :zero) + :w',
            ConditionExpression: itemExists,
            ExpressionAttributeValues: { ':zero': 0, ':w': units },
          }),
        ),
      ),
    );
  }

  async markFailed(op: Op, message: string): Promise<void> {
    const items: TransactItem[] = [
      {
        Update: {
          TableName: this.t.table,
          Key: this.t.key(op.id),
          UpdateExpression: `SET #s = :failed, last_error = :error, updated_at = :now${this.t.failureRemoves ? ` REMOVE ${this.t.failureRemoves}` : ''}`,
          ConditionExpression: '#s IN (:pending, :running) AND attempt_count = :attempt',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':failed': 'failed',
            ':pending': 'pending',
            ':running': 'running',
            ':attempt': op.attempt_count,
            ':error': message,
            ':now': new Date().toISOString(),
          },
        },
      },
      ...(this.t.failureItems?.(op) ?? []),
    ];
    try {
      await transient(() =>
        transact(this.t.db, items.map(unguarded), undefined, {
          onCancelled: (codes, error) =>
            codes.includes('ConditionalCheckFailed') ? new ConditionFailed() : (error as Error),
        }),
      );
    } catch (error) {
      // Already failed, retried or completed by someone else: nothing to record.
      if (error instanceof ConditionFailed) return;
      throw error;
    }
  }
}

/** One chunked phase's items: a key prefix of one partition. */
export interface PrefixChunks<Op> extends LedgerTable<Op> {
  partition: string;
  prefix: string;
  /** Release → the write items that apply it `count` times. */
  releaseItems: (release: Release, count: number) => TransactItem[];
  /** Deletes the items (idempotent); returns the write units consumed. */
  remove: (items: Item[]) => Promise<number>;
}

/** Reference changes per checkpoint transaction (DynamoDB allows 100 items; one is the operation). */
const MAX_RELEASES = 90;

/** The engine's chunk port over a key prefix. */
export function prefixChunks<Op extends WorkflowOperation, R extends Release>(
  c: PrefixChunks<Op>,
): ChunkPort<Op, Item, R> {
  return {
    capacity: MAX_RELEASES,
    position: (item) => item[attributes.sk] as string,
    page: (after, limit) =>
      transient(() =>
        queryPage(
          c.db,
          queryInput(c.table, keyCondition(c.partition, { prefix: c.prefix }), { consistent: true, limit }),
          after ? { [attributes.pk]: c.partition, [attributes.sk]: after } : undefined,
        ),
      ),
    async between(from, to) {
      const items: Item[] = [];
      await transient(() =>
        queryPages(
          c.db,
          queryInput(c.table, keyCondition(c.partition, { from, to }), { consistent: true }),
          (page) => {
            items.push(...page);
            return true;
          },
        ),
      );
      return items.filter((i) => (i[attributes.sk] as string).startsWith(c.prefix));
    },
    commit: (op, chunk) => commitChunk(c, op, chunk),
    async remove(items) {
      c.units.add(await c.remove(items));
    },
  };
}

/** Commits a chunk: its key range, its count and its releases, in one write. */
async function commitChunk<Op extends WorkflowOperation>(
  c: PrefixChunks<Op>,
  op: Op,
  { previous, from, to, counted, releases }: ChunkCommit<Release>,
): Promise<void> {
  const update = {
    TableName: c.table,
    Key: c.key(op.id),
    UpdateExpression:
      'SET checkpoint_from = :from, checkpoint_to = :to, updated_at = :now, progress.deleted = progress.deleted + :n, write_units = if_not_exists(write_units, :zero) + :w',
    ConditionExpression: `phase = :phase AND #s = :running AND ${previous ? 'checkpoint_to = :prev' : 'attribute_not_exists(checkpoint_to)'}`,
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':from': from,
      ':to': to,
      ':now': new Date().toISOString(),
      ':n': counted,
      ':zero': 0,
      ':w': c.units.take(),
      ':phase': op.phase,
      ':running': 'running',
      ...(previous ? { ':prev': previous } : {}),
    },
  };
  const movedOn = () =>
    new TransientError('Another runner moved this deletion on; resuming from its checkpoint.');
  if (releases.length === 0) {
    const out = await transient(() =>
      storeCall(() => c.db.send(new UpdateCommand({ ...update, ReturnConsumedCapacity: 'TOTAL' })), {
        onConditionFailed: movedOn,
      }),
    );
    c.units.add(writeUnits(out));
    return;
  }
  const items = releases.flatMap((r) => c.releaseItems(r.release, r.count)).map(unguarded);
  const out = await transient(() =>
    transact(c.db, [unguarded({ Update: update }), ...items], undefined, {
      consumedCapacity: true,
      onCancelled: (codes) =>
        codes[0] === 'ConditionalCheckFailed'
          ? movedOn()
          : new TransientError('The checkpoint transaction was cancelled; retrying.'),
    }),
  );
  c.units.add(writeUnits(out));
}
