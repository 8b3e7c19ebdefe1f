import type { Permission } from '../api/operation.ts';
import { ForbiddenError } from '../http/errors.ts';
import type { Principal, WorkspaceRole } from './principal.ts';

/** Built-in roles as permission sets; super_admin holds every permission everywhere. */
export const builtInRoles: Readonly<Record<WorkspaceRole, readonly Permission[]>> = {
  viewer: ['read'],
  editor: ['read', 'write'],
  admin: ['read', 'write', 'manage'],
};

/** The principal's role in a workspace (by id, then by name). */
export function roleIn(
  principal: Principal,
  workspace: { id: string; name: string },
): WorkspaceRole | undefined {
  return principal.roles[workspace.id] ?? principal.roles[workspace.name];
}

/** Throws ForbiddenError unless the principal may use `permission` (in `workspace` when given). */
export function authorize(
  principal: Principal,
  permission: Permission,
  workspace?: { id: string; name: string },
): void {
  if (permission === 'public' || permission === 'authenticated' || principal.superAdmin) return;
  if (permission === 'global') {
    throw new ForbiddenError('super_admin_required', 'This operation requires the super_admin role.');
  }
  const role = workspace ? roleIn(principal, workspace) : undefined;
  if (!role) {
    throw new ForbiddenError('no_workspace_access', 'You have no role in this workspace.');
  }
  if (!builtInRoles[role].includes(permission)) {
    throw new ForbiddenError(
      'insufficient_role',
      `Your role '${role}' does not grant '${permission}' access.`,
    );
  }
}
