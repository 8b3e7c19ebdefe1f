import type { Permission } from '#api/operation.ts';
import { own } from '#domain/dictionary.ts';
import { currentOperationId } from '#domain/renamed-operations.ts';
import type { Policy, PolicyAction } from '#domain/roles.ts';
import { ForbiddenError } from './errors.ts';
import type { Principal } from './principal.ts';

/** What a caller asks to do: one management operation in one workspace. */
export interface AccessRequest {
  operationId: string;
  permission: Permission;
}

const everyOgcRead: Policy[] = (['wms', 'wfs', 'wcs', 'wmts', 'ogcapi', 'ogc-tiles'] as const).map(
  (service) => ({
    workspace: '*',
    service,
    operation: '*',
    action: 'read',
  }),
);

const grant = (action: PolicyAction): Policy => ({
  workspace: '*',
  service: 'management',
  operation: '*',
  action,
});

/**
 * The built-in workspace roles as predefined policy sets: the engine evaluates them exactly like
 * the policies of a custom role. (super_admin is global and bypasses the engine.)
 */
export const builtInPolicies: Readonly<Record<'viewer' | 'editor' | 'admin', readonly Policy[]>> = {
  viewer: [grant('read'), ...everyOgcRead],
  editor: [
    grant('read'),
    grant('write'),
    ...everyOgcRead,
    { workspace: '*', service: 'wfs', operation: '*', action: 'write' },
  ],
  admin: [
    grant('read'),
    grant('write'),
    grant('manage'),
    ...everyOgcRead,
    { workspace: '*', service: 'wfs', operation: '*', action: 'write' },
    { workspace: '*', service: 'wfs', operation: '*', action: 'manage' },
  ],
};

/** Loads the policies of a custom role (empty when it does not exist or was retired). */
export type PolicyLoader = (roleId: string) => Promise<readonly Policy[]>;

/** The management action an operation needs: its permission class. */
export function managementAction(permission: Permission): PolicyAction | 'global' | 'none' {
  if (permission === 'public' || permission === 'authenticated') return 'none';
  // The data plane decides by its own matrix (ADR 0120); through this engine it fails closed.
  if (permission === 'data') return 'global';
  return permission;
}

/** Does any policy allow this operation in this workspace? */
export function policiesAllow(
  policies: readonly Policy[],
  request: AccessRequest,
  workspaceId: string,
): boolean {
  const action = managementAction(request.permission);
  if (action === 'none') return true;
  if (action === 'global') return false;
  return policies.some(
    (p) =>
      p.service === 'management' &&
      (p.workspace === '*' || p.workspace === workspaceId) &&
      // A policy stored before the peer's ids were taken names the old id (ADR 0132).
      (p.operation === '*' || currentOperationId(p.operation) === request.operationId) &&
      p.action === action,
  );
}

/**
 * The principal's role in a workspace: by id, then by name, then its global (`*`) role. Own
 * entries only: a workspace named `constructor` has no role inherited from Object.prototype.
 */
export function roleIn(principal: Principal, workspace: { id: string; name: string }): string | undefined {
  const role =
    own(principal.roles, workspace.id) ?? own(principal.roles, workspace.name) ?? own(principal.roles, '*');
  return typeof role === 'string' ? role : undefined;
}

/** The policies a role id stands for: a built-in set, or the custom role's stored policies. */
export async function policiesOf(roleId: string, loadPolicies: PolicyLoader): Promise<readonly Policy[]> {
  if (roleId === 'viewer' || roleId === 'editor' || roleId === 'admin') return builtInPolicies[roleId];
  // super_admin is global only (DESIGN §6): as a workspace role it grants nothing.
  if (roleId === 'super_admin') return [];
  return loadPolicies(roleId);
}

/**
 * THE authorization engine. Throws ForbiddenError unless the principal may call the operation
 * (in `workspace` when given). super_admin may do everything; global operations need it.
 */
export async function authorize(
  principal: Principal,
  request: AccessRequest,
  workspace: { id: string; name: string } | undefined,
  loadPolicies: PolicyLoader,
): Promise<void> {
  const action = managementAction(request.permission);
  if (action === 'none' || principal.superAdmin) return;
  if (action === 'global') {
    throw new ForbiddenError('super_admin_required', 'This operation requires the super_admin role.');
  }
  const role = workspace ? roleIn(principal, workspace) : undefined;
  if (!role || !workspace)
    throw new ForbiddenError('no_workspace_access', 'You have no role in this workspace.');
  if (!policiesAllow(await policiesOf(role, loadPolicies), request, workspace.id)) {
    throw new ForbiddenError(
      'insufficient_role',
      `Your role '${role}' does not allow ${request.operationId} here.`,
    );
  }
}
