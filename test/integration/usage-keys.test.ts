import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UsageKeyProvisioner } from '../../shared/domain/usage-keys.ts';
import type { WorkspaceRepository } from '../../shared/domain/workspaces.ts';
import { useHostStore } from '../support/store.ts';

let workspaces: WorkspaceRepository;
let domain: typeof import('../../shared/domain/workspaces.ts');
let apiKeys: typeof import('../../shared/domain/api-keys.ts');
let repos: typeof import('../../shared/store/repositories.ts');

beforeAll(async () => {
  useHostStore();
  repos = await import('../../shared/store/repositories.ts');
  workspaces = repos.workspaceRepository();
  domain = await import('../../shared/domain/workspaces.ts');
  apiKeys = await import('../../shared/domain/api-keys.ts');
});

/** Records what would happen in API Gateway (the AWS adapter is exercised only in AWS). */
function recordingProvisioner() {
  const live = new Set<string>();
  const provisioner: UsageKeyProvisioner = {
    async create(workspaceId) {
      const id = `key-${workspaceId}`;
      live.add(id);
      return { id, value: `value-${workspaceId}-padding-to-20` };
    },
    async remove(id) {
      live.delete(id);
    },
  };
  return { provisioner, live };
}

describe('per-workspace usage keys', () => {
  it('gives a workspace its own key, copies it to its API keys for the authorizer, and removes it with the workspace', async () => {
    const { provisioner, live } = recordingProvisioner();
    const ws = await domain.createWorkspace(
      workspaces,
      { name: `uk-${randomUUID().slice(0, 8)}` },
      new Date(),
      provisioner,
    );
    expect(live.size).toBe(1);
    const stored = await domain.resolveWorkspace(workspaces, ws.id);
    expect(stored?.usage_key).toBe(ws.usage_key);

    const { key } = await apiKeys.createApiKey(
      repos.apiKeyRepository(),
      ws.id,
      { name: 'k', role_id: 'viewer' },
      new Date(),
      stored?.usage_key,
    );
    const credential = await repos.apiKeyRepository().findCredentialByHash(key.key_hash);
    expect(credential?.usage_key).toBe(ws.usage_key);

    await domain.deleteWorkspace(workspaces, stored as NonNullable<typeof stored>, undefined, provisioner);
    expect(live.size).toBe(0);
  });

  it('removes the new key again when the workspace name is taken', async () => {
    const { provisioner, live } = recordingProvisioner();
    const name = `uk-${randomUUID().slice(0, 8)}`;
    await domain.createWorkspace(workspaces, { name }, new Date(), provisioner);
    await expect(domain.createWorkspace(workspaces, { name }, new Date(), provisioner)).rejects.toThrow(
      /already exists/,
    );
    expect(live.size).toBe(1);
  });
});
