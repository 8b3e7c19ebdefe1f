import { describe, expect, it } from 'vitest';
import { managementCatalog } from '#api/catalog.ts';
import { routes } from '#api/routes.ts';
import { authorize, type PolicyLoader } from '#auth/permissions.ts';
import type { Principal } from '#auth/principal.ts';
import { mayManageWorkspace } from '#auth/workspace-access.ts';
import { currentOperationId, renamedOperationIds } from '#domain/renamed-operations.ts';
import { presentPolicy } from '#domain/role-policies.ts';
import { normalisePolicy, type Policy, policyId, type StoredPolicy } from '#domain/roles.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { ForbiddenError } from '#http/errors.ts';

/*
 * The peer's operation ids (ADR 0132): role policies stored before the rename name the old ids and
 * keep granting exactly what they granted; a policy added with an old id is stored under the new one.
 */

const ws = { id: '6a1d3b2e-0000-4000-8000-0000000000a1', name: 'alpha' };
const renames = Object.entries(renamedOperationIds);

function principal(roles: Record<string, string>): Principal {
  return { id: 'p', subject: 's', authMethod: 'jwt', superAdmin: false, roles };
}

/** The operations a custom role holding exactly `policies` may call in `ws`. */
async function allowedBy(policies: Policy[]): Promise<string[]> {
  const load: PolicyLoader = async () => policies;
  const allowed: string[] = [];
  for (const op of routes) {
    try {
      await authorize(principal({ [ws.id]: 'legacy' }), op, ws, load);
      allowed.push(op.operationId);
    } catch (error) {
      expect(error).toBeInstanceOf(ForbiddenError);
    }
  }
  return allowed.sort();
}

/** What a policy on the operation's permission class grants, under the given id. */
function grantOn(operation: string, action: Policy['action']): Policy {
  return { workspace: ws.id, service: 'management', operation, action };
}

describe('currentOperationId', () => {
  it.each(renames)('maps the old id %s to %s', (old, current) => {
    expect(currentOperationId(old)).toBe(current);
    expect(currentOperationId(current)).toBe(current);
  });

  it('leaves every other id as it is, Object.prototype keys included', () => {
    for (const id of ['createLayer', '*', 'constructor', 'toString', '__proto__', 'GETMAP']) {
      expect(currentOperationId(id)).toBe(id);
    }
  });

  it('maps only ids the route table no longer has, onto ids it has', () => {
    const ids = new Set(routes.map((r) => r.operationId));
    for (const [old, current] of renames) {
      expect(ids.has(old), old).toBe(false);
      expect(ids.has(current), current).toBe(true);
    }
  });
});

describe('a policy stored under an old id', () => {
  // The renamed operations a policy could name (their class is read, write or manage).
  const grantable = renames.filter(([, current]) => {
    const action = managementCatalog().get(current);
    return action !== undefined && action !== 'global';
  });

  it('covers the renamed operations a policy can name', () => {
    expect(grantable.map(([old]) => old).sort()).toEqual([
      'getImportPreview',
      'putImportPlan',
      'testServiceConnection',
    ]);
  });

  it.each(grantable)('%s authorizes %s and nothing else', async (old, current) => {
    const action = managementCatalog().get(current) as Policy['action'];
    const legacy = await allowedBy([grantOn(old, action)]);
    expect(legacy).toContain(current);
    // Exactly what the same policy under the new id grants, and what no policy grants (open routes).
    expect(legacy).toEqual(await allowedBy([grantOn(current, action)]));
    expect(legacy).toEqual([...(await allowedBy([])), current].sort());
  });

  it.each([
    ['getDeletion', 'getDeletionOperation'],
    ['listDeletions', 'listDeletionOperations'],
    ['retryDeletion', 'retryDeletionOperation'],
  ])('%s lets a deletion handler ask for %s (mayManageWorkspace)', async (old, current) => {
    const workspace = { id: ws.id, name: ws.name } as Workspace;
    const ports = {
      workspaces: { findById: async (id: string) => (id === ws.id ? workspace : undefined) },
      claimMappings: { all: async () => [] },
      roles: { listPolicies: async () => [{ ...grantOn(old, 'manage'), id: 'x', created_at: '' }] },
    } as unknown as Parameters<typeof mayManageWorkspace>[0];
    const caller = principal({ [ws.id]: 'legacy' });
    expect(await mayManageWorkspace(ports, caller, ws.id, current)).toBe(true);
    const others = renames.map(([, id]) => id).filter((id) => id !== current);
    for (const id of others) expect(await mayManageWorkspace(ports, caller, ws.id, id), id).toBe(false);
  });

  it('is listed under the new id, with its stored id (removeRolePolicy still finds it)', () => {
    const rule = grantOn('putImportPlan', 'write');
    const stored: StoredPolicy = { ...rule, id: policyId(rule), created_at: '2026-01-01T00:00:00.000Z' };
    expect(presentPolicy(stored)).toEqual({ ...stored, operation: 'setImportPlan', version: 1 });
  });

  it('leaves protocol policies as stored', () => {
    const stored: StoredPolicy = {
      workspace: '*',
      service: 'wms',
      operation: 'GETMAP',
      action: 'read',
      id: 'p1',
      created_at: '2026-01-01T00:00:00.000Z',
    };
    expect(presentPolicy(stored).operation).toBe('GETMAP');
  });
});

describe('addRolePolicy with an old id (normalisePolicy)', () => {
  it.each(renames)('validates %s as %s', (old, current) => {
    const input = (operation: string) => ({
      workspace: ws.id,
      service: 'management' as const,
      operation,
      action: managementCatalog().get(current) === 'write' ? ('write' as const) : ('manage' as const),
    });
    const outcome = (operation: string) => {
      try {
        return normalisePolicy(input(operation), managementCatalog());
      } catch (error) {
        return (error as Error).message;
      }
    };
    // The same rule — or the same refusal (the deletions and listAuditEvents can't be named).
    expect(outcome(old)).toEqual(outcome(current));
  });

  it.each([
    ['putImportPlan', 'setImportPlan', 'write'],
    ['getImportPreview', 'previewImport', 'write'],
    ['testServiceConnection', 'testExistingServiceConnection', 'manage'],
  ] as const)('stores %s as %s, under the id the new one gets', (old, current, action) => {
    const rule = normalisePolicy(
      { workspace: ws.id, service: 'management', operation: old, action },
      managementCatalog(),
    );
    expect(rule).toEqual({ service: 'management', operation: current, action });
    expect(policyId({ workspace: ws.id, ...rule })).toBe(policyId(grantOn(current, action)));
  });

  it('still refuses an old id with the wrong action, naming the new id', () => {
    expect(() =>
      normalisePolicy(
        { workspace: ws.id, service: 'management', operation: 'putImportPlan', action: 'manage' },
        managementCatalog(),
      ),
    ).toThrow(/'setImportPlan' uses the action 'write', not 'manage'/);
  });

  it('does not map protocol operations', () => {
    expect(
      normalisePolicy(
        { workspace: '*', service: 'wms', operation: 'getmap', action: 'read' },
        managementCatalog(),
      ),
    ).toEqual({ service: 'wms', operation: 'GETMAP', action: 'read' });
  });
});
