import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '#domain/audit.ts';
import type { DeletionOperation } from '#domain/deletion-model.ts';
import { ownTable, plantDeletion } from '../support/store.ts';

/*
 * The sharded global audit listing and the sparse index of active deletions (ADR 0113) against
 * DynamoDB Local, on a table of its own: the global listing reads every shard of the table, and
 * the run's host writes audit records and sweeps deletions on its own table all the time.
 */

type Item = Record<string, unknown>;
const table = `audit-shards-${randomUUID().slice(0, 8)}`;
let raw: DynamoDBClient;
let own: Awaited<ReturnType<typeof ownTable>> | undefined;
let db: DynamoDBDocumentClient;
let keys: typeof import('#store/keys.ts').keys;
let entities: typeof import('#store/keys.ts').entities;
let audit: typeof import('#store/audit-records.ts');
let trail: import('#store/audit-records.ts').DynamoAuditTrail;

async function put(...list: Item[]): Promise<void> {
  for (let i = 0; i < list.length; i += 25) {
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [table]: list.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  }
}

const base = Date.parse('2026-03-01T00:00:00.000Z');

/** A stored audit record at `base + ms`, as the store writes it. */
function record(ms: number, fields: Partial<AuditRecord> = {}): Item {
  return audit.auditItem(
    {
      operation: 'updateLayer',
      principal: { id: 'apikey:k', auth_method: 'apikey' },
      request_id: randomUUID(),
      outcome: 'succeeded',
      changes: [],
      ...fields,
    },
    { days: 90 },
    base + ms,
  );
}

/** The same record as a version before the shards wrote it: on the unsharded partition. */
const legacy = (item: Item): Item => ({ ...item, GSI1PK: keys.auditUnshardedPartition });

/** Every page of the global listing from the start, with a hook between pages. */
async function walk(
  filter: import('#domain/audit.ts').AuditFilter,
  limit: number,
  between?: (page: number) => Promise<void>,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; page < 500; page++) {
    const result = await trail.list('all', filter, limit, cursor);
    expect(result.items.length).toBeLessThanOrEqual(limit);
    ids.push(...result.items.map((r) => r.id));
    cursor = result.nextCursor;
    if (!cursor) return { ids, pages: page };
    await between?.(page);
  }
  throw new Error('the listing did not end');
}

/** Newest first, as the listing orders them. */
const newestFirst = (items: Item[]) =>
  [...items].sort((a, b) => (String(a.GSI1SK) < String(b.GSI1SK) ? 1 : -1)).map((i) => i.id as string);

beforeAll(async () => {
  own = await ownTable(table);
  ({ raw, db } = own);
  ({ keys, entities } = await import('#store/keys.ts'));
  audit = await import('#store/audit-records.ts');
  trail = new audit.DynamoAuditTrail({ days: 90 }, db, table);
});

afterAll(async () => {
  await own?.drop();
});

describe('the global audit listing over shards (ADR 0113)', () => {
  // One run of records shared by the tests of this block: the global listing reads the whole table.
  const written: Item[] = [];

  beforeAll(async () => {
    // 150 new records over every shard, 30 old ones on the unsharded partition (older, and two
    // interleaved with the new ones, as a clock-skewed writer of the old version would leave them).
    for (let i = 0; i < 150; i++) {
      written.push(
        record(100_000 + i * 10, {
          operation: i % 3 === 0 ? 'createLayer' : 'updateLayer',
          outcome: i % 5 === 0 ? 'refused' : 'succeeded',
        }),
      );
    }
    for (let i = 0; i < 28; i++) written.push(legacy(record(i * 10)));
    written.push(legacy(record(100_005)), legacy(record(100_505)));
    await put(...written);
  });

  it('writes new records across all 16 shards', () => {
    const shards = new Set(written.filter((i) => i.GSI1PK !== 'AUDIT').map((i) => i.GSI1PK));
    expect(shards.size).toBe(16);
  });

  // Every page queries all 17 partitions: small limits make many pages, hence the longer timeout.
  it.each([6, 50, 100])(
    'pages every record once, newest first, old partition included (limit %i)',
    { timeout: 90_000 },
    async (limit) => {
      const { ids, pages } = await walk({}, limit);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(newestFirst(written));
      expect(pages).toBeGreaterThanOrEqual(Math.ceil(written.length / limit));
    },
  );

  it('keeps the filters and the time window, paging exactly within them', async () => {
    const since = new Date(base + 100_200).toISOString();
    const until = new Date(base + 101_000).toISOString();
    const expected = newestFirst(
      written.filter(
        (i) =>
          i.operation === 'createLayer' &&
          i.outcome === 'succeeded' &&
          String(i.at) >= since &&
          String(i.at) <= until,
      ),
    );
    expect(expected.length).toBeGreaterThan(10);
    const { ids } = await walk({ operation: 'createLayer', outcome: 'succeeded', since, until }, 4);
    expect(ids).toEqual(expected);
  });

  it('answers a short page with a cursor when a selective filter runs out of rounds, and still misses nothing', {
    timeout: 90_000,
  }, async () => {
    // One matching principal among the 180: each round reads little, so pages come back short.
    const { ids, pages } = await walk({ principal: 'apikey:nobody' }, 3);
    expect(ids).toEqual([]);
    // Empty pages that still carry a cursor: the rounds ran out before the partitions did.
    expect(pages).toBeGreaterThan(1);
    const target = written[40] as Item;
    const { ids: one } = await walk({ operation: target.operation as string }, 2);
    expect(one).toEqual(newestFirst(written.filter((i) => i.operation === target.operation)));
  });

  it('resumes a cursor issued before the shards (a LastEvaluatedKey of the old partition) where it was', async () => {
    const old = written.find(
      (i) => i.GSI1PK === 'AUDIT' && Number(Date.parse(String(i.at))) === base + 100_505,
    );
    const oldCursor = Buffer.from(
      JSON.stringify({ PK: old?.PK, SK: old?.SK, GSI1PK: old?.GSI1PK, GSI1SK: old?.GSI1SK }),
    ).toString('base64url');
    const page = await trail.list('all', {}, 5, oldCursor);
    const all = newestFirst(written);
    const at = all.indexOf(old?.id as string);
    expect(page.items.map((r) => r.id)).toEqual(all.slice(at + 1, at + 6));
    // A workspace listing's cursor, or garbage, is still a 400 before any Query.
    const wsCursor = Buffer.from(JSON.stringify({ PK: 'AUDIT#w', SK: 'x' })).toString('base64url');
    await expect(trail.list('all', {}, 5, wsCursor)).rejects.toMatchObject({ reason: 'invalid_cursor' });
  });
});

describe('paging while records are written (ADR 0113)', () => {
  it('never repeats or skips a record written before the walk, whatever is written between pages', async () => {
    // A window of its own, so the other block's records stay out.
    const from = 10_000_000;
    const before: Item[] = Array.from({ length: 60 }, (_, i) => record(from + i * 100));
    await put(...before);
    const window = {
      since: new Date(base + from).toISOString(),
      until: new Date(base + from + 1_000_000).toISOString(),
    };
    const late: Item[] = [];
    const { ids } = await walk(window, 6, async (page) => {
      // Between pages: one record newer than anything listed, one in the middle of what is left
      // (a writer whose clock lags), one exactly at the last position returned plus a millisecond.
      const batch = [
        record(from + 900_000 + page),
        record(from + 3_000 - page * 7),
        record(from + page * 100 + 1),
      ];
      late.push(...batch);
      await put(...batch);
    });
    expect(new Set(ids).size).toBe(ids.length);
    // Everything written before the walk is listed, in order.
    const listedBefore = ids.filter((id) => before.some((b) => b.id === id));
    expect(listedBefore).toEqual(newestFirst(before));
    // Late ones appear at most once and in their place: the listing as a whole stays newest first.
    const order = new Map(newestFirst([...before, ...late]).map((id, n) => [id, n]));
    const positions = ids.map((id) => order.get(id) as number);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });
});

describe('the sparse index of active deletions (ADR 0113)', () => {
  const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  function operation(status: DeletionOperation['status'], createdAt: string): DeletionOperation {
    return {
      id: randomUUID(),
      scope: 'service',
      workspace_id: randomUUID(),
      workspace_name: 'ws',
      target_id: randomUUID(),
      target_name: 'svc',
      status,
      phase: 'layers',
      progress: { total: 1, deleted: 0 },
      attempt_count: 1,
      created_at: createdAt,
      updated_at: createdAt,
      created_by: 'test',
    };
  }

  /** An operation as a version before the index wrote it: on the DELETIONS listing only. */
  async function plantLegacy(op: DeletionOperation): Promise<void> {
    await plantDeletion(db, table, op, { active: false });
  }

  const read = async (id: string) =>
    (await db.send(new GetCommand({ TableName: table, Key: keys.deletion(id), ConsistentRead: true }))).Item;

  it('puts the active operations an older version left on the index once, then reads only the index', async () => {
    const { DynamoDeletionRepository } = await import('#store/deletions-repository.ts');
    const repository = new DynamoDeletionRepository();
    const running = operation('running', ago(600));
    const pending = operation('pending', ago(500));
    const finished = [operation('completed', ago(700)), operation('failed', ago(650))];
    for (const op of [running, pending, ...finished]) await plantLegacy(op);

    const visited: string[] = [];
    await repository.unfinished(async (op) => {
      visited.push(op.id);
    });
    expect(visited.sort()).toEqual([running.id, pending.id].sort());
    expect(await read(running.id)).toMatchObject({ GSI2PK: keys.deletionActivePartition });
    for (const op of finished) expect((await read(op.id))?.GSI2PK).toBeUndefined();
    const mark = (
      await db.send(
        new GetCommand({ TableName: table, Key: keys.deletionActiveIndexed(), ConsistentRead: true }),
      )
    ).Item;
    expect(mark?.at).toEqual(expect.any(String));

    // A day on, an operation only an old version could have written (no index entry) is not
    // read: the sweep no longer looks at the DELETIONS history.
    await db.send(
      new PutCommand({
        TableName: table,
        Item: { ...keys.deletionActiveIndexed(), entity: entities.deletionActiveIndexed, at: ago(25 * 60) },
      }),
    );
    const stray = operation('running', ago(30));
    await plantLegacy(stray);
    const later: string[] = [];
    await repository.unfinished(async (op) => {
      later.push(op.id);
    });
    expect(later.sort()).toEqual([running.id, pending.id].sort());
    expect((await read(stray.id))?.GSI2PK).toBeUndefined();
  });

  it('indexes, within a day of the mark, what a previous version started during the deploy', async () => {
    const { DynamoDeletionRepository } = await import('#store/deletions-repository.ts');
    await db.send(
      new PutCommand({
        TableName: table,
        Item: { ...keys.deletionActiveIndexed(), entity: entities.deletionActiveIndexed, at: ago(10) },
      }),
    );
    const during = operation('running', ago(5));
    const old = operation('running', ago(3 * 60));
    await plantLegacy(during);
    await plantLegacy(old);
    const visited: string[] = [];
    await new DynamoDeletionRepository().unfinished(async (op) => {
      visited.push(op.id);
    });
    expect(visited).toContain(during.id);
    expect(visited).not.toContain(old.id);
  });

  it('comes off the index in the write that fails it, and back on with a retry', async () => {
    const { DynamoDeletionRepository } = await import('#store/deletions-repository.ts');
    const { DynamoOperationLedger, WriteUnits } = await import('#store/chunk-commits.ts');
    const { activeIndexRemoval, toOperation } = await import('#store/deletions-repository.ts');
    // A workspace's deletion: a service's retry would also need its workspace to exist.
    const op = { ...operation('running', ago(20)), scope: 'workspace' as const };
    await plantDeletion(db, table, op);
    const ledger = new DynamoOperationLedger({
      db,
      table,
      key: (id) => keys.deletion(id),
      read: (item) => toOperation(item) as never,
      units: new WriteUnits(),
      failureRemoves: activeIndexRemoval,
    });
    await ledger.markFailed(op as never, 'boom');
    const failed = await read(op.id);
    expect(failed).toMatchObject({ status: 'failed', GSI1PK: keys.deletionListingPartition });
    expect(failed?.GSI2PK).toBeUndefined();
    expect(failed?.GSI2SK).toBeUndefined();

    const repository = new DynamoDeletionRepository();
    await repository.markRetry(toOperation(failed as Item), new Date().toISOString());
    expect(await read(op.id)).toMatchObject({
      status: 'pending',
      GSI2PK: keys.deletionActivePartition,
      GSI2SK: `${op.created_at}#${op.id}`,
    });
  });
});

describe('the local table gains the index it lacks (ADR 0113)', () => {
  it('adds GSI2 to a table created before it', async () => {
    const { ensureTable } = await import('#infra/local/dynamodb.ts');
    const { createTableInput } = await import('#store/table.ts');
    const old = `audit-shards-old-${randomUUID().slice(0, 8)}`;
    const input = createTableInput(old);
    await raw.send(
      new CreateTableCommand({
        ...input,
        AttributeDefinitions: input.AttributeDefinitions.filter((a) => !a.AttributeName.startsWith('GSI2')),
        GlobalSecondaryIndexes: input.GlobalSecondaryIndexes.filter((g) => g.IndexName !== 'GSI2'),
      }),
    );
    try {
      await ensureTable(process.env.DYNAMODB_ENDPOINT as string, old);
      const { Table } = await raw.send(new DescribeTableCommand({ TableName: old }));
      expect(Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['GSI1', 'GSI2']);
    } finally {
      await raw.send(new DeleteTableCommand({ TableName: old }));
    }
  });
});
