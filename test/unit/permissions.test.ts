import { describe, expect, it } from 'vitest';
import type { Permission } from '../../shared/api/operation.ts';
import { authorize } from '../../shared/auth/permissions.ts';
import type { Principal, WorkspaceRole } from '../../shared/auth/principal.ts';
import { ForbiddenError } from '../../shared/http/errors.ts';

const ws = { id: '6a1d3b2e-0000-4000-8000-000000000001', name: 'alpha' };
const other = { id: '6a1d3b2e-0000-4000-8000-000000000002', name: 'beta' };

function principal(roles: Record<string, WorkspaceRole>, superAdmin = false): Principal {
  return { id: 'p', subject: 's', authMethod: 'apikey', superAdmin, roles, usageKey: 'global' };
}

function allowed(p: Principal, permission: Permission, workspace?: typeof ws): boolean {
  try {
    authorize(p, permission, workspace);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ForbiddenError);
    return false;
  }
}

const permissions: Permission[] = ['public', 'authenticated', 'read', 'write', 'manage', 'global'];

describe('authorize', () => {
  it.each([
    ['viewer', ['public', 'authenticated', 'read']],
    ['editor', ['public', 'authenticated', 'read', 'write']],
    ['admin', ['public', 'authenticated', 'read', 'write', 'manage']],
  ] as const)('grants the %s role exactly %j in its workspace', (role, expected) => {
    const p = principal({ [ws.id]: role });
    expect(permissions.filter((perm) => allowed(p, perm, ws))).toEqual(expected);
  });

  it('grants super_admin everything everywhere', () => {
    const p = principal({}, true);
    expect(permissions.filter((perm) => allowed(p, perm, other))).toEqual(permissions);
  });

  it('matches a role given by workspace name', () => {
    expect(allowed(principal({ alpha: 'admin' }), 'manage', ws)).toBe(true);
  });

  it('grants nothing workspace-scoped in another workspace', () => {
    const p = principal({ [ws.id]: 'admin' });
    expect(permissions.filter((perm) => allowed(p, perm, other))).toEqual(['public', 'authenticated']);
  });
});
