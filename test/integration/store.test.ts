import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRepository } from '#domain/api-keys.ts';
import {
  AlreadyExistsError,
  DependencyConflictError,
  NotFoundError,
  UnavailableError,
} from '#domain/errors.ts';
import type { WorkspaceRepository } from '#domain/workspaces.ts';
import { useHostStore } from '../support/store.ts';

// Repositories against the real DynamoDB Local of the run (unique names per test, no truncation).
let workspaces: WorkspaceRepository;
let apiKeys: ApiKeyRepository;
let domain: typeof import('#domain/workspaces.ts');
let keysDomain: typeof import('#domain/api-keys.ts');

beforeAll(async () => {
  useHostStore();
  const repos = await import('#wiring/repositories.ts');
  workspaces = repos.workspaceRepository();
  apiKeys = repos.apiKeyRepository();
  domain = await import('#domain/workspaces.ts');
  keysDomain = await import('#domain/api-keys.ts');
});

const name = () => `it-${randomUUID().slice(0, 13)}`;

describe('workspace repository', () => {
  it('resolves by id and by name, and hides nothing else', async () => {
    const ws = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    expect((await domain.resolveWorkspace(workspaces, ws.id))?.name).toBe(ws.name);
    expect((await domain.resolveWorkspace(workspaces, ws.name))?.id).toBe(ws.id);
    expect(await domain.resolveWorkspace(workspaces, name())).toBeUndefined();
  });

  it('keeps exactly one of two concurrent renames to the same name', async () => {
    const a = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    const b = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    const target = name();
    const results = await Promise.allSettled([
      domain.updateWorkspace({ workspaces }, { workspace: a, body: { name: target }, ifMatch: undefined }),
      domain.updateWorkspace({ workspaces }, { workspace: b, body: { name: target }, ifMatch: undefined }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(AlreadyExistsError);
    const owner = await domain.resolveWorkspace(workspaces, target);
    expect([a.id, b.id]).toContain(owner?.id);
  });

  it('refuses a key for a workspace being deleted, so deletion never orphans keys', async () => {
    const ws = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    const results = await Promise.allSettled([
      domain.deleteWorkspace(workspaces, ws, undefined),
      ...Array.from({ length: 5 }, () =>
        keysDomain.createApiKey(
          { keys: apiKeys },
          { workspaceId: ws.id, body: { name: 'k', role_id: 'viewer' } },
        ),
      ),
    ]);
    expect(results[0]?.status).toBe('fulfilled');
    const created = results.slice(1).filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{
      key: { id: string; key_hash: string };
    }>[];
    for (const r of created) {
      // Any key that won the race was deleted with the workspace: no orphan remains.
      expect(await apiKeys.find(ws.id, r.value.key.id)).toBeUndefined();
      expect(await apiKeys.findCredentialByHash(r.value.key.key_hash)).toBeUndefined();
    }
    for (const r of results.slice(1))
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(NotFoundError);
  });

  it('refuses to delete a workspace whose keys do not fit one transaction and restores it', async () => {
    const ws = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    await Promise.all(
      Array.from({ length: 50 }, () =>
        keysDomain.createApiKey(
          { keys: apiKeys },
          { workspaceId: ws.id, body: { name: 'k', role_id: 'viewer' } },
        ),
      ),
    );
    await expect(domain.deleteWorkspace(workspaces, ws, undefined)).rejects.toBeInstanceOf(
      DependencyConflictError,
    );
    expect((await domain.resolveWorkspace(workspaces, ws.id))?.status).toBe('active');
  });
});

describe('store outage', () => {
  it('turns a refused connection into UnavailableError (503), not a bug', async () => {
    const { DynamoWorkspaceRepository } = await import('#store/workspaces-repository.ts');
    const { documentClient } = await import('#store/client.ts');
    const client = documentClient();
    const original = client.config.endpoint;
    // Point the shared client at a closed port for one call.
    const { freePort } = await import('../support/ports.ts');
    const port = await freePort();
    client.config.endpoint = async () => ({ protocol: 'http:', hostname: '127.0.0.1', port, path: '/' });
    try {
      await expect(new DynamoWorkspaceRepository().findById(randomUUID())).rejects.toBeInstanceOf(
        UnavailableError,
      );
    } finally {
      client.config.endpoint = original;
    }
  });
});

describe('mosaic harvest jobs in a workspace being deleted', () => {
  it("refuses a chunk's granules once the workspace is hidden, so none lands behind its deletion's sweep", async () => {
    const { GetCommand, PutCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#store/keys.ts');
    const { DynamoHarvestJobRepository } = await import('#store/mosaic-harvest-jobs-repository.ts');
    const { documentClient, tableName } = await import('#store/client.ts');
    const db = documentClient();
    const TableName = tableName();
    const ws = await domain.createWorkspace({ workspaces: workspaces }, { body: { name: name() } });
    const at = new Date().toISOString();
    const service = {
      id: randomUUID(),
      workspace_id: ws.id,
      name: 'mosaic',
      type: 'raster_mosaic',
      connection: { root_uri: 'file:///nowhere' },
      status: 'active',
      version: 1,
      created_at: at,
      updated_at: at,
    } as never as import('#domain/services.ts').Service;
    await db.send(
      new PutCommand({
        TableName,
        Item: { ...keys.service(ws.id, service.id), entity: 'Service', ...service },
      }),
    );
    const jobs = new DynamoHarvestJobRepository();
    const job = {
      id: randomUUID(),
      workspace_id: ws.id,
      service_id: service.id,
      status: 'queued',
      phase: 'adding',
      pattern: '**/*.tif',
      remove_missing: false,
      cancel_requested: false,
      files_scanned: 0,
      granules_added: 0,
      granules_removed: 0,
      files_skipped: 0,
      files_failed: 0,
      failures: [],
      version: 1,
      created_at: at,
      updated_at: at,
    } as import('#domain/mosaic-harvest-jobs.ts').HarvestJob;
    await jobs.create(job, service);
    expect(await jobs.markRunning(job, at)).toBe(true);
    // A workspace deletion hides the workspace; its services stay active until its sweep reaches them.
    await db.send(
      new UpdateCommand({
        TableName,
        Key: keys.workspace(ws.id),
        UpdateExpression: 'SET #s = :deleting',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':deleting': 'deleting' },
      }),
    );
    const running = { ...job, status: 'running' as const, version: 2 };
    const granule = {
      id: randomUUID(),
      workspace_id: ws.id,
      service_id: service.id,
      source_uri: 'file:///nowhere/a.tif',
      crs: 'EPSG:4326',
      bbox: [0, 0, 1, 1] as [number, number, number, number],
      width: 1,
      height: 1,
      band_count: 1,
      data_type: 'uint8',
      resolution_x: 1,
      resolution_y: 1,
      added_generation: 1,
      created_at: at,
    };
    await expect(
      jobs.commitChunk(
        running,
        {
          previous: undefined,
          phase: 'adding',
          next: { ...running, cursor: 'a.tif', files_scanned: 1, granules_added: 1, generation: 1 },
          add: { service, base: { generation: 0, granule_count: 0 }, granules: [granule] },
        },
        at,
      ),
    ).rejects.toMatchObject({ reason: 'service_not_found' });
    const stored = await db.send(
      new GetCommand({
        TableName,
        Key: keys.mosaicGranule(ws.id, service.id, granule.id),
        ConsistentRead: true,
      }),
    );
    expect(stored.Item).toBeUndefined();
  });
});
