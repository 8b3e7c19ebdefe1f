import { type ClaimMappingRepository, resolveRole } from '#domain/claim-mappings.ts';
import { dictionary } from '#domain/dictionary.ts';
import type { RoleRepository } from '#domain/roles.ts';
import type { ServiceRepository } from '#domain/services.ts';
import type { Workspace, WorkspaceRepository } from '#domain/workspaces.ts';
import { authorize, type PolicyLoader } from './permissions.ts';
import type { Principal } from './principal.ts';
import type { KnownClaimRole } from './request-target.ts';

/**
 * The ports workspace access reads: the workspace lookup, the workspaces' claim mappings, custom
 * roles' policies and the `{service}` lookup of service routes. `shared/wiring` builds them; auth
 * imports no repository.
 */
export interface AccessPorts {
  workspaces: WorkspaceRepository;
  claimMappings: Pick<ClaimMappingRepository, 'all'>;
  roles: Pick<RoleRepository, 'listPolicies'>;
  services: Pick<ServiceRepository, 'findById' | 'findByName'>;
}

/** Custom roles' policies, read when a caller's role is not built in. */
export function policyLoader(ports: AccessPorts): PolicyLoader {
  return (roleId: string) => ports.roles.listPolicies(roleId);
}

/**
 * The caller's roles with the workspace's claim mappings applied: read on every request, so a
 * deleted mapping stops at once (token callers only; super_admin needs none).
 */
export async function rolesInWorkspace(
  ports: AccessPorts,
  principal: Principal,
  workspace: Workspace,
  resolved?: KnownClaimRole,
): Promise<Principal['roles']> {
  if (!principal.claims || principal.superAdmin || (workspace.claim_mapping_count ?? 0) === 0) {
    return principal.roles;
  }
  // Resolved by the authorizer from the workspace's mapping summary in this request (ADR 0103).
  const role =
    resolved?.workspaceId === workspace.id
      ? resolved.role
      : resolveRole(await ports.claimMappings.all(workspace.id), principal.claims);
  return role ? dictionary([...Object.entries(principal.roles), [workspace.id, role]]) : principal.roles;
}

/**
 * May the principal call a `manage` operation in this workspace? The same engine as every
 * workspace route (roles by id or name, claim mappings resolved per request, custom roles'
 * policies) for the operations that are not under a `{workspace}` path (deletions).
 */
export async function mayManageWorkspace(
  ports: AccessPorts,
  principal: Principal,
  workspaceId: string,
  operationId: string,
): Promise<boolean> {
  if (principal.superAdmin) return true;
  const workspace = await ports.workspaces.findById(workspaceId);
  if (!workspace) return false;
  const caller = { ...principal, roles: await rolesInWorkspace(ports, principal, workspace) };
  try {
    await authorize(caller, { operationId, permission: 'manage' }, workspace, policyLoader(ports));
    return true;
  } catch {
    return false;
  }
}
