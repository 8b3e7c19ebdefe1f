import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRepository } from '../../shared/domain/api-keys.ts';
import {
  AlreadyExistsError,
  DependencyConflictError,
  NotFoundError,
  UnavailableError,
} from '../../shared/domain/errors.ts';
import type { WorkspaceRepository } from '../../shared/domain/workspaces.ts';
import { useHostStore } from '../support/store.ts';

// Repositories against the real DynamoDB Local of the run (unique names per test, no truncation).
let workspaces: WorkspaceRepository;
let apiKeys: ApiKeyRepository;
let domain: typeof import('../../shared/domain/workspaces.ts');
let keysDomain: typeof import('../../shared/domain/api-keys.ts');

beforeAll(async () => {
  useHostStore();
  const repos = await import('../../shared/store/repositories.ts');
  workspaces = repos.workspaceRepository();
  apiKeys = repos.apiKeyRepository();
  domain = await import('../../shared/domain/workspaces.ts');
  keysDomain = await import('../../shared/domain/api-keys.ts');
});

const name = () => `it-${randomUUID().slice(0, 13)}`;

describe('workspace repository', () => {
  it('resolves by id and by name, and hides nothing else', async () => {
    const ws = await domain.createWorkspace(workspaces, { name: name() });
    expect((await domain.resolveWorkspace(workspaces, ws.id))?.name).toBe(ws.name);
    expect((await domain.resolveWorkspace(workspaces, ws.name))?.id).toBe(ws.id);
    expect(await domain.resolveWorkspace(workspaces, name())).toBeUndefined();
  });

  it('keeps exactly one of two concurrent renames to the same name', async () => {
    const a = await domain.createWorkspace(workspaces, { name: name() });
    const b = await domain.createWorkspace(workspaces, { name: name() });
    const target = name();
    const results = await Promise.allSettled([
      domain.updateWorkspace(workspaces, a, { name: target }, undefined),
      domain.updateWorkspace(workspaces, b, { name: target }, undefined),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(AlreadyExistsError);
    const owner = await domain.resolveWorkspace(workspaces, target);
    expect([a.id, b.id]).toContain(owner?.id);
  });

  it('refuses a key for a workspace being deleted, so deletion never orphans keys', async () => {
    const ws = await domain.createWorkspace(workspaces, { name: name() });
    const results = await Promise.allSettled([
      domain.deleteWorkspace(workspaces, ws, undefined),
      ...Array.from({ length: 5 }, () =>
        keysDomain.createApiKey(apiKeys, ws.id, { name: 'k', role_id: 'viewer' }),
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
    const ws = await domain.createWorkspace(workspaces, { name: name() });
    await Promise.all(
      Array.from({ length: 50 }, () =>
        keysDomain.createApiKey(apiKeys, ws.id, { name: 'k', role_id: 'viewer' }),
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
    const { DynamoWorkspaceRepository } = await import('../../shared/store/workspaces-repository.ts');
    const { documentClient } = await import('../../shared/store/client.ts');
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
