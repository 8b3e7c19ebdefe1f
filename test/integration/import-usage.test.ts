import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportJob } from '#domain/import-model.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { hostDynamo, useHostStore } from '../support/store.ts';

// The workspace's import usage (ADR 0110) against the run's DynamoDB Local: it changes in the
// transaction that changes a job's reservation, never past the quota, never without the job.

type Modules = {
  keys: typeof import('#store/keys.ts');
  imports: import('#store/imports-repository.ts').DynamoImportRepository;
  workspaces: import('#store/workspaces-repository.ts').DynamoWorkspaceRepository;
  model: typeof import('#domain/import-model.ts');
  domain: typeof import('#domain/imports.ts');
  reservations: typeof import('#domain/import-reservations.ts');
  workspaceDomain: typeof import('#domain/workspaces.ts');
};
let m: Modules;
let table: string;
const db = hostDynamo();

beforeAll(async () => {
  useHostStore();
  table = process.env.TABLE_NAME as string;
  m = {
    keys: await import('#store/keys.ts'),
    imports: new (await import('#store/imports-repository.ts')).DynamoImportRepository(),
    workspaces: new (await import('#store/workspaces-repository.ts')).DynamoWorkspaceRepository(),
    model: await import('#domain/import-model.ts'),
    domain: await import('#domain/imports.ts'),
    reservations: await import('#domain/import-reservations.ts'),
    workspaceDomain: await import('#domain/workspaces.ts'),
  };
});

afterAll(() => db.destroy());

const workspace = (): Promise<Workspace> =>
  m.workspaceDomain.createWorkspace(
    { workspaces: m.workspaces },
    { body: { name: `iu-${randomUUID().slice(0, 13)}` } },
  );

async function newJob(ws: Workspace): Promise<ImportJob> {
  const ts = new Date().toISOString();
  const job: ImportJob = {
    id: m.model.timeOrderedId(),
    workspace_id: ws.id,
    name: 'f',
    source_kind: 'upload',
    source_location: 'uploads/f.geojson',
    status: 'awaiting_plan',
    phase: 'transform',
    service_name: `svc-${randomUUID().slice(0, 8)}`,
    auto_publish: false,
    max_bytes: 1000,
    processed_bytes: 0,
    processed_features: 0,
    processed_layers: 0,
    total_layers: 0,
    retry_count: 0,
    run: 1,
    version: 1,
    created_by: 'test',
    created_at: ts,
    updated_at: ts,
  };
  await m.imports.create(job);
  return job;
}

const reserve = (job: ImportJob, rows: number, bytes: number, status: ImportJob['status'] = 'queued') =>
  m.domain.advance(job, { status, ...m.reservations.reservation({ rows, bytes }) });

const quota = { rows: 100, bytes: 10_000 };

async function usageItem(ws: Workspace) {
  const out = await db.send(
    new GetCommand({ TableName: table, Key: m.keys.keys.importUsage(ws.id), ConsistentRead: true }),
  );
  return out.Item;
}

describe("the workspace's import usage (ADR 0110)", () => {
  it('follows the reservations of its jobs, in their own transactions', async () => {
    const ws = await workspace();
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 0, bytes: 0 });
    const a = await newJob(ws);
    const b = await newJob(ws);

    const aReserved = reserve(a, 40, 1000);
    await m.imports.save(a, aReserved, quota);
    const bReserved = reserve(b, 30, 500);
    await m.imports.save(b, bReserved, quota);
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 70, bytes: 1500 });
    expect(await usageItem(ws)).toMatchObject({ entity: 'ImportUsage', rows: 70, bytes: 1500 });

    // A transition that keeps the reservation changes nothing; a release gives it back.
    const aRunning = m.domain.advance(aReserved, { status: 'running' });
    await m.imports.save(aReserved, aRunning);
    await m.imports.save(aRunning, reserve(aRunning, 0, 0, 'failed'));
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 30, bytes: 500 });
    expect(await m.imports.find(ws.id, a.id)).not.toHaveProperty('reserved_rows');
  });

  it('refuses a reservation past the quota and writes neither the job nor the usage', async () => {
    const ws = await workspace();
    const a = await newJob(ws);
    const b = await newJob(ws);
    await m.imports.save(a, reserve(a, 80, 100), quota);

    await expect(m.imports.save(b, reserve(b, 30, 100), quota)).rejects.toMatchObject({
      name: 'RuleViolationError',
      reason: 'workspace_import_quota',
    });
    await expect(m.imports.save(b, reserve(b, 101, 0), quota)).rejects.toMatchObject({
      reason: 'workspace_import_quota',
    });
    expect(await m.imports.find(ws.id, b.id)).toMatchObject({ status: 'awaiting_plan', version: 1 });
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 80, bytes: 100 });
    // Exactly up to the quota is fine.
    await m.imports.save(b, reserve(b, 20, 100), quota);
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 100, bytes: 200 });
  });

  it('a save that lost its version race changes no usage', async () => {
    const ws = await workspace();
    const a = await newJob(ws);
    await m.imports.save(a, m.domain.advance(a, { status: 'queued' }));

    await expect(m.imports.save(a, reserve(a, 10, 10), quota)).rejects.toMatchObject({
      reason: 'concurrent_modification',
    });
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 0, bytes: 0 });
  });

  it('of concurrent reservations only as many commit as the quota holds', async () => {
    const ws = await workspace();
    const jobs = await Promise.all(Array.from({ length: 8 }, () => newJob(ws)));

    const outcomes = await Promise.allSettled(jobs.map((j) => m.imports.save(j, reserve(j, 30, 1), quota)));

    const committed = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(committed).toBe(3);
    for (const o of outcomes)
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ reason: 'workspace_import_quota' });
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 90, bytes: 3 });
  });

  it('a growing reservation without the quota is a bug, not a silent write', async () => {
    const ws = await workspace();
    const a = await newJob(ws);
    await expect(m.imports.save(a, reserve(a, 1, 1))).rejects.toThrow(/needs the workspace quota/);
    expect(await m.imports.usage(ws.id)).toEqual({ rows: 0, bytes: 0 });
  });
});
