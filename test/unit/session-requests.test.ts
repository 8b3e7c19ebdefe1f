import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renewSession, type SessionRequestDeps, signIn } from '#auth/session-requests.ts';
import type { ApiKeyCredential, ApiKeyRepository } from '#domain/api-keys.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import type { Session, SessionRepository } from '#domain/sessions.ts';
import type { Workspace, WorkspaceRepository } from '#domain/workspaces.ts';
import { barrier } from '../support/barrier.ts';

/*
 * login and refreshSession (ADR 0109) store the session while the answer's reads go out (ADR 0154):
 * the write waits until the caller's workspace read has started, and the read until the write has.
 * Made one after the other, neither gets there: the test times out.
 */

const KEY = `gpk_${'A'.repeat(43)}`;

function deps(workspaceId: string, meet: () => Promise<void>, log: string[]): SessionRequestDeps {
  const credential: ApiKeyCredential = {
    key_id: randomUUID(),
    workspace_id: workspaceId,
    role_id: 'editor',
    revoked: false,
    name: 'console',
  };
  const sessions: Partial<SessionRepository> = {
    failedLogins: async () => 0,
    create: async () => {
      log.push('write');
      await meet();
    },
    rotate: async () => {
      log.push('write');
      await meet();
    },
  };
  const workspaces: Partial<WorkspaceRepository> = {
    findById: async (id: string) => {
      log.push('read');
      await meet();
      return { id, name: 'parcels', status: 'active' } as unknown as Workspace;
    },
  };
  return {
    apiKeys: { findCredentialByHash: async () => credential } as unknown as ApiKeyRepository,
    claimMappings: {} as ClaimMappingRepository,
    sessions: sessions as SessionRepository,
    workspaces: workspaces as WorkspaceRepository,
  };
}

describe('session requests', () => {
  it('login stores the session and reads the caller’s workspaces together', async () => {
    const workspaceId = randomUUID();
    const log: string[] = [];
    const both = barrier(2);
    const { issued, me } = await signIn(deps(workspaceId, both.wait, log), {
      token: KEY,
      sourceIp: '192.0.2.1',
    });
    expect(log.sort()).toEqual(['read', 'write']);
    expect(me.session_id).toBe(issued.session.session_id);
    expect(me.workspaces).toEqual([{ id: workspaceId, name: 'parcels', role: 'editor' }]);
  }, 2_000);

  it('a failed write fails the login, whatever the reads found', async () => {
    const d = deps(randomUUID(), async () => undefined, []);
    d.sessions.create = async () => {
      throw new Error('the table is unreachable');
    };
    await expect(signIn(d, { token: KEY, sourceIp: '192.0.2.1' })).rejects.toThrow(
      'the table is unreachable',
    );
  });

  it('refreshSession rotates the pair and reads the caller’s workspaces together', async () => {
    const workspaceId = randomUUID();
    const log: string[] = [];
    const both = barrier(2);
    const d = deps(workspaceId, both.wait, log);
    const now = Date.now();
    const current = {
      session_id: randomUUID(),
      token_hash: 'h',
      csrf_hash: 'c',
      credential: { type: 'apikey', key_hash: 'k', key_id: 'id' },
      created_at: new Date(now - 60_000).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
      idle_expires_at: new Date(now + 600_000).toISOString(),
    } as unknown as Session;
    d.sessions.findByTokenHash = async () => current;
    const principal = {
      id: 'apikey:id',
      subject: 'console',
      authMethod: 'apikey' as const,
      superAdmin: false,
      roles: { [workspaceId]: 'editor' },
      session: {
        id: current.session_id,
        expiresAt: current.expires_at,
        idleExpiresAt: current.idle_expires_at,
      },
    };
    const { issued, me } = await renewSession(d, { principal: principal as never, cookieToken: 'cookie' });
    expect(log.sort()).toEqual(['read', 'write']);
    expect(issued.session.session_id).toBe(current.session_id);
    expect(issued.session.previous_token_hash).toBe(current.token_hash);
    expect(me.workspaces).toEqual([{ id: workspaceId, name: 'parcels', role: 'editor' }]);
  }, 2_000);
});
