import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describePrincipal } from '#auth/me.ts';
import type { Principal } from '#auth/principal.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import { dictionary } from '#domain/dictionary.ts';
import type { Workspace, WorkspaceRepository } from '#domain/workspaces.ts';
import { barrier } from '../support/barrier.ts';

/* getAuthMe's workspaces (and login's and refreshSession's answers): read together, kept in order. */

const workspace = (id: string, name: string) => ({ id, name, status: 'active' }) as unknown as Workspace;

function principalWith(roles: Record<string, string>): Principal {
  const held = dictionary<string>();
  Object.assign(held, roles);
  return { id: 'apikey:k', subject: 'k', authMethod: 'apikey', superAdmin: false, roles: held };
}

const noMappings = {} as ClaimMappingRepository;

describe('describePrincipal', () => {
  it("reads the caller's workspaces in one round and lists them in the order of its roles", async () => {
    const ids: string[] = Array.from({ length: 5 }, () => randomUUID());
    // Each read waits until all five have started: reads made one after the other never get
    // there (the first waits for ever), so the test times out.
    const round = barrier(ids.length);
    const workspaces = {
      findById: async (id: string) => {
        await round.wait();
        // The later ones answer first: the order must still be the roles'.
        await new Promise((resolve) => setTimeout(resolve, 10 * (ids.length - ids.indexOf(id))));
        return workspace(id, `ws-${ids.indexOf(id)}`);
      },
      findByName: async () => undefined,
    } as unknown as WorkspaceRepository;

    const me = await describePrincipal(
      { workspaces, claimMappings: noMappings },
      { principal: principalWith(Object.fromEntries(ids.map((id) => [id, 'viewer']))) },
    );

    expect(round.started()).toBe(ids.length);
    expect(me.workspaces).toEqual(ids.map((id, i) => ({ id, name: `ws-${i}`, role: 'viewer' })));
  }, 2_000);

  it('keeps at most 16 reads in flight and lists a workspace named twice once', async () => {
    const ids: string[] = Array.from({ length: 40 }, () => randomUUID());
    let inFlight = 0;
    let most = 0;
    const workspaces = {
      findById: async (id: string) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        return workspace(id, `ws-${ids.indexOf(id)}`);
      },
      findByName: async (name: string) => workspace(ids[0] as string, name),
    } as unknown as WorkspaceRepository;

    const me = await describePrincipal(
      { workspaces, claimMappings: noMappings },
      {
        principal: principalWith({
          ...Object.fromEntries(ids.map((id) => [id, 'viewer'])),
          'ws-0': 'editor',
        }),
      },
    );

    expect(most).toBe(16);
    expect(me.workspaces).toHaveLength(40);
    expect(me.workspaces[0]).toEqual({ id: ids[0], name: 'ws-0', role: 'viewer' });
  });
});
