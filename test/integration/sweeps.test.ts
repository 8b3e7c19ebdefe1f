import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeletionOperation } from '#domain/deletion-model.ts';
import type { ImportJob } from '#domain/import-model.ts';
import type { LocalWorkflowRunner } from '#infra/local/workflows.ts';
import type { Key } from '#store/keys.ts';
import type { WorkflowStarters } from '#workflows/starter.ts';
import { ownTable, plantDeletion as plantStored } from '../support/store.ts';

/*
 * The sweep against DynamoDB Local, through the real store adapters and wiring (ADR 0093), on a
 * table of its own: the run's local host sweeps its table every minute, and must not race with
 * the stuck work planted here. Executions are what the test says (nothing runs) and starts are
 * recorded instead of run.
 */

const table = `sweeps-${randomUUID().slice(0, 8)}`;
let db: DynamoDBDocumentClient;
let own: Awaited<ReturnType<typeof ownTable>> | undefined;
let keys: typeof import('#store/keys.ts').keys;
let entities: typeof import('#store/keys.ts').entities;
let sweeps: typeof import('#infra/local/sweeps.ts');
let store: typeof import('#store/sweeps.ts');
const started: string[] = [];

/** The local runner as the sweep sees it: these executions run, no others. */
function runner(running: string[] = []): LocalWorkflowRunner {
  return {
    deletionRunning: (input: { operation_id: string; attempt: number }) =>
      running.includes(`${input.operation_id}#${input.attempt}`),
    importRunning: (name: string) => running.includes(name),
    harvestRunning: (name: string) => running.includes(name),
    tileCacheJobRunning: (name: string) => running.includes(name),
  } as unknown as LocalWorkflowRunner;
}

const ago = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();

async function plantDeletion(now: Date, updatedMinutesAgo: number): Promise<DeletionOperation> {
  const op: DeletionOperation = {
    id: randomUUID(),
    scope: 'service',
    workspace_id: randomUUID(),
    workspace_name: 'ws',
    target_id: randomUUID(),
    target_name: 'svc',
    status: 'running',
    phase: 'layers',
    progress: { total: 10, deleted: 4 },
    attempt_count: 1,
    created_at: ago(now, 120),
    updated_at: ago(now, updatedMinutesAgo),
    created_by: 'test',
  };
  await plantStored(db, table, op);
  // A running service deletion counts in its workspace (a workspace deletion waits for zero).
  await db.send(
    new PutCommand({
      TableName: table,
      Item: { ...keys.activeDeletions(op.workspace_id), entity: entities.activeDeletions, count: 1 },
    }),
  );
  return op;
}

async function plantImport(now: Date, updatedMinutesAgo: number): Promise<ImportJob> {
  const job: ImportJob = {
    id: randomUUID(),
    workspace_id: randomUUID(),
    name: 'parcels',
    source_kind: 'uri',
    source_uri: 's3://bucket/parcels.geojson',
    source_location: 's3://bucket/parcels.geojson',
    status: 'running',
    phase: 'transform',
    service_name: 'import-parcels',
    auto_publish: false,
    max_bytes: 1000,
    processed_bytes: 100,
    processed_features: 10,
    processed_layers: 0,
    total_layers: 1,
    retry_count: 0,
    run: 1,
    version: 3,
    created_by: 'test',
    created_at: ago(now, 120),
    updated_at: ago(now, updatedMinutesAgo),
  };
  await db.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...keys.importJob(job.workspace_id, job.id),
        ...keys.importWorking(job.id),
        entity: entities.importJob,
        ...job,
      },
    }),
  );
  return job;
}

/** A harvest job and a tile cache job left `running` by lost executions, each holding its marker. */
async function plantJobs(now: Date, updatedMinutesAgo: number) {
  const workspaceId = randomUUID();
  const serviceId = randomUUID();
  const common = {
    workspace_id: workspaceId,
    status: 'running',
    cancel_requested: false,
    version: 2,
    created_at: ago(now, 120),
    updated_at: ago(now, updatedMinutesAgo),
  };
  const harvest = { ...common, id: randomUUID(), service_id: serviceId, phase: 'adding', cursor: 'a.tif' };
  await db.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...keys.mosaicHarvestJob(workspaceId, serviceId, harvest.id),
        ...keys.mosaicHarvestWorking(harvest.id),
        entity: entities.mosaicHarvestJob,
        ...harvest,
        pattern: '**/*.tif',
        remove_missing: false,
        failures: [],
        ...{ files_scanned: 10, granules_added: 10, granules_removed: 0, files_skipped: 0, files_failed: 0 },
      },
    }),
  );
  await db.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...keys.mosaicHarvestLock(workspaceId, serviceId),
        entity: entities.mosaicHarvestLock,
        job_id: harvest.id,
      },
    }),
  );
  const tiles = { ...common, id: randomUUID(), cursor: '3' };
  await db.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...keys.tileCacheJob(workspaceId, tiles.id),
        ...keys.tileCacheJobWorking(tiles.id),
        entity: entities.tileCacheJob,
        ...tiles,
        type: 'seed',
        tile_matrix_set: 'WebMercatorQuad',
        layers: [],
        zoom_min: 0,
        zoom_max: 2,
        ...{ tiles_done: 3, tiles_rendered: 3, tiles_skipped: 0, tiles_removed: 0, bytes_written: 30 },
        bytes_removed: 0,
      },
    }),
  );
  await db.send(
    new PutCommand({
      TableName: table,
      Item: { ...keys.tileCacheJobLock(workspaceId), entity: entities.tileCacheJobLock, job_id: tiles.id },
    }),
  );
  return { workspaceId, serviceId, harvest, tiles };
}

const read = async (key: Key) =>
  (await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

beforeAll(async () => {
  process.env.SWEEP_STUCK_AFTER_MINUTES = '15';
  process.env.SWEEP_MAX_RESTARTS = '1';
  own = await ownTable(table);
  ({ db } = own);
  ({ keys, entities } = await import('#store/keys.ts'));
  sweeps = await import('#infra/local/sweeps.ts');
  store = await import('#store/sweeps.ts');
  // Starts are recorded, not run (the planted operations have no catalog behind them).
  const recorder: WorkflowStarters = {
    startDeletion: async (name) => {
      started.push(name);
    },
    startImport: async (name) => {
      started.push(name);
    },
    startHarvest: async (name) => {
      started.push(name);
    },
    startTileCacheJob: async (name) => {
      started.push(name);
    },
  };
  const { installLocalWorkflowStarter } = await import('#wiring/workflows.ts');
  installLocalWorkflowStarter(recorder);
  // The sweep's table grants, checked as the local host checks them (ADR 0071).
  const { installDataAccessCheck } = await import('#infra/local/data-access.ts');
  const { documentClient } = await import('#store/client.ts');
  installDataAccessCheck(documentClient());
});

afterAll(async () => {
  const { installLocalWorkflowStarter } = await import('#wiring/workflows.ts');
  installLocalWorkflowStarter(undefined);
  await own?.drop();
});

describe('the local sweep of stuck work (DynamoDB Local)', () => {
  it('restarts a stuck deletion and import, then fails them when the restart made no progress', async () => {
    const now = new Date();
    const op = await plantDeletion(now, 60);
    const job = await plantImport(now, 60);

    const first = await sweeps.sweepOnce(runner(), now);
    expect(first.stuck.items).toEqual(
      expect.arrayContaining([
        { kind: 'deletion', id: op.id, outcome: 'restarted', detail: 'attempt 2' },
        { kind: 'import', id: job.id, outcome: 'restarted', detail: 'run 2' },
      ]),
    );
    expect(started).toEqual(expect.arrayContaining([`${op.id}-attempt-2`, `import-${job.id}-2`]));
    expect(await read(keys.deletion(op.id))).toMatchObject({
      status: 'pending',
      attempt_count: 2,
      updated_at: now.toISOString(),
      sweep: { restarts: 1, attempt: 2, progress: 'layers:4' },
      GSI2PK: keys.deletionActivePartition,
    });
    const restartedJob = await read(keys.importJob(job.workspace_id, job.id));
    expect(restartedJob).toMatchObject({ status: 'running', run: 2, version: 4, GSI1PK: 'IMPORTS#WORKING' });
    expect(restartedJob?.sweep).toMatchObject({ restarts: 1, attempt: 2 });

    // 20 minutes on, nothing moved: the budget (1) is spent, both fail with a clear error.
    const later = new Date(now.getTime() + 20 * 60_000);
    const second = await sweeps.sweepOnce(runner(), later);
    expect(second.stuck.items).toEqual(
      expect.arrayContaining([
        { kind: 'deletion', id: op.id, outcome: 'failed' },
        { kind: 'import', id: job.id, outcome: 'failed' },
      ]),
    );
    const failed = await read(keys.deletion(op.id));
    expect(failed?.status).toBe('failed');
    expect(failed?.last_error).toMatch(/scheduled sweep: no progress for 20 minute\(s\).*retry the deletion/);
    // The failed service deletion no longer counts as running in its workspace.
    expect((await read(keys.activeDeletions(op.workspace_id)))?.count).toBe(0);
    // Failed is off the sweep's active index, in the write that failed it (ADR 0113).
    expect(failed?.GSI2PK).toBeUndefined();
    expect(failed?.GSI2SK).toBeUndefined();
    const failedJob = await read(keys.importJob(job.workspace_id, job.id));
    expect(failedJob).toMatchObject({ status: 'failed', phase: 'transform', version: 5 });
    expect(failedJob?.error_message).toMatch(/retry the import \(or cancel it/);
    expect(failedJob?.GSI1PK).toBeUndefined();
    // The failure is in the import's history.
    const events = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
        ExpressionAttributeValues: { ':pk': `WS#${job.workspace_id}`, ':sk': `IMPORTEVENT#${job.id}#` },
      }),
    );
    expect(events.Items?.map((e) => e.status)).toEqual(['failed']);
  });

  it('restarts a stuck harvest and tile cache job as a new run, then fails them and releases their markers', async () => {
    const now = new Date();
    const { workspaceId, serviceId, harvest, tiles } = await plantJobs(now, 60);
    const harvestKey = keys.mosaicHarvestJob(workspaceId, serviceId, harvest.id);
    const tilesKey = keys.tileCacheJob(workspaceId, tiles.id);

    const first = await sweeps.sweepOnce(runner(), now);
    expect(first.stuck.items).toEqual(
      expect.arrayContaining([
        { kind: 'harvest', id: harvest.id, outcome: 'restarted', detail: 'run 2' },
        { kind: 'tile_cache_job', id: tiles.id, outcome: 'restarted', detail: 'run 2' },
      ]),
    );
    expect(started).toEqual(expect.arrayContaining([`${harvest.id}-run-2`, `${tiles.id}-run-2`]));
    // Same status, cursor and version; still on the working index the host resumes from.
    expect(await read(harvestKey)).toMatchObject({
      status: 'running',
      cursor: 'a.tif',
      version: 2,
      run: 2,
      updated_at: now.toISOString(),
      sweep: { restarts: 1, attempt: 2 },
      GSI1PK: 'HARVESTS#WORKING',
    });
    expect(await read(tilesKey)).toMatchObject({
      status: 'running',
      run: 2,
      version: 2,
      GSI1PK: 'TILEJOBS#WORKING',
    });

    // Their new runs' executions are gone too and nothing moved: the budget (1) is spent.
    const later = new Date(now.getTime() + 20 * 60_000);
    const second = await sweeps.sweepOnce(runner(), later);
    expect(second.stuck.items).toEqual(
      expect.arrayContaining([
        { kind: 'harvest', id: harvest.id, outcome: 'failed' },
        { kind: 'tile_cache_job', id: tiles.id, outcome: 'failed' },
      ]),
    );
    const failed = await read(harvestKey);
    expect(failed).toMatchObject({ status: 'failed', version: 3, error: { reason: 'harvest_failed' } });
    expect(failed?.error).toMatchObject({
      message: expect.stringMatching(/scheduled sweep.*create a new harvest job/),
    });
    expect(failed?.GSI1PK).toBeUndefined();
    expect(await read(tilesKey)).toMatchObject({
      status: 'failed',
      error: { reason: 'tile_cache_job_failed' },
    });
    // The markers are released, so the next job of the mosaic or workspace can start.
    expect(await read(keys.mosaicHarvestLock(workspaceId, serviceId))).toBeUndefined();
    expect(await read(keys.tileCacheJobLock(workspaceId))).toBeUndefined();
  });

  it('leaves a job alone whose current run still runs', async () => {
    const now = new Date();
    const { workspaceId, serviceId, harvest, tiles } = await plantJobs(now, 60);
    const ids: string[] = [harvest.id, tiles.id];
    const result = await sweeps.sweepOnce(runner(ids), now);
    expect(result.stuck.items.filter((i) => ids.includes(i.id))).toEqual([]);
    const harvestKey = keys.mosaicHarvestJob(workspaceId, serviceId, harvest.id);
    expect((await read(harvestKey))?.run).toBeUndefined();
    // Gone again, so the next sweeps here don't find them stuck.
    for (const Key of [harvestKey, keys.tileCacheJob(workspaceId, tiles.id)])
      await db.send(new DeleteCommand({ TableName: table, Key }));
  });

  it('leaves work alone that progresses, or whose execution still runs', async () => {
    const now = new Date();
    const fresh = await plantDeletion(now, 2);
    const alive = await plantDeletion(now, 60);
    const job = await plantImport(now, 60);
    const before = started.length;
    const result = await sweeps.sweepOnce(runner([`${alive.id}#1`, `import-${job.id}-1`]), now);
    expect(result.stuck.items.filter((i) => [fresh.id, alive.id, job.id].includes(i.id))).toEqual([]);
    expect(started.length).toBe(before);
    for (const id of [fresh.id, alive.id])
      expect(await read(keys.deletion(id))).toMatchObject({ status: 'running', attempt_count: 1 });
    expect(await read(keys.importJob(job.workspace_id, job.id))).toMatchObject({ run: 1, version: 3 });
  });
});

describe('the local stand-in for TTL', () => {
  it('removes expired sessions, login windows and API key lookups, keeping live items and the retained key record', async () => {
    const now = new Date();
    const { DynamoSessionRepository } = await import('#store/sessions-repository.ts');
    const { DynamoApiKeyRepository } = await import('#store/api-keys-repository.ts');
    const sessions = new DynamoSessionRepository();
    const session = (hash: string, expiresAt: string) => ({
      session_id: randomUUID(),
      token_hash: hash,
      csrf_hash: 'c',
      credential: { type: 'apikey' as const, key_hash: 'k', key_id: randomUUID() },
      created_at: ago(now, 120),
      expires_at: expiresAt,
      idle_expires_at: expiresAt,
    });
    const expired = randomUUID();
    const live = randomUUID();
    await sessions.create(session(expired, ago(now, 1)) as never);
    await sessions.create(session(live, new Date(now.getTime() + 3_600_000).toISOString()) as never);
    await sessions.recordFailedLogin('192.0.2.1', 1, Math.floor(now.getTime() / 1000) - 10);

    // A global key (no workspace to check) that expired a minute ago: the domain refuses such a
    // create, so the repository is called directly, as if it had expired since.
    const keyRepo = new DynamoApiKeyRepository();
    const key = {
      id: randomUUID(),
      name: 'ci',
      role_id: 'viewer' as const,
      key_prefix: 'gpk_abcdefgh',
      key_hash: randomUUID().replaceAll('-', ''),
      revoked: false,
      expires_at: ago(now, 1),
      version: 1,
      created_at: ago(now, 120),
      updated_at: ago(now, 120),
    };
    await keyRepo.create(key);
    const ttlOf = async (k: Key) => (await read(k))?.expires_at_epoch as number;
    expect(await ttlOf(keys.apiKeyHash(key.key_hash))).toBe(Math.ceil(Date.parse(key.expires_at) / 1000));
    expect(await ttlOf(keys.apiKey(undefined, key.id))).toBe(
      Math.ceil(Date.parse(key.expires_at) / 1000) + 30 * 24 * 3600,
    );

    expect(await store.deleteExpiredItems(now)).toBeGreaterThanOrEqual(3);
    expect(await sessions.findByTokenHash(expired)).toBeUndefined();
    expect(await sessions.findByTokenHash(live)).toBeDefined();
    expect(await sessions.failedLogins('192.0.2.1', 1)).toBe(0);
    expect(await keyRepo.findCredentialByHash(key.key_hash)).toBeUndefined();
    // The record stays listed (expired) for the retention, then goes too.
    expect(await keyRepo.find(undefined, key.id)).toBeDefined();
    await store.deleteExpiredItems(new Date(now.getTime() + 31 * 24 * 3_600_000));
    expect(await keyRepo.find(undefined, key.id)).toBeUndefined();
  });

  it('runs on the host timer and stops when closed', async () => {
    const { DynamoSessionRepository } = await import('#store/sessions-repository.ts');
    const sessions = new DynamoSessionRepository();
    const hash = randomUUID();
    const past = new Date(Date.now() - 60_000).toISOString();
    await sessions.create({
      session_id: randomUUID(),
      token_hash: hash,
      csrf_hash: 'c',
      credential: { type: 'apikey', key_hash: 'k', key_id: randomUUID() },
      created_at: past,
      expires_at: past,
      idle_expires_at: past,
    } as never);
    const timer = sweeps.startLocalSweeps(runner(), 50, 50);
    const deadline = Date.now() + 10_000;
    while ((await sessions.findByTokenHash(hash)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await timer.close();
    expect(await sessions.findByTokenHash(hash)).toBeUndefined();
  });
});
