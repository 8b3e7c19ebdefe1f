import { resolveRole } from '../domain/claim-mappings.ts';
import { dictionary } from '../domain/dictionary.ts';
import type { Workspace } from '../domain/workspaces.ts';
import { claimMappingRepository, roleRepository, workspaceRepository } from '../store/repositories.ts';
import { authorize } from './permissions.ts';
import type { Principal } from './principal.ts';

/** Custom roles' policies, read when a caller's role is not built in. */
export const loadPolicies = (roleId: string) => roleRepository().listPolicies(roleId);

/**
 * The caller's roles with the workspace's claim mappings applied: read on every request, so a
 * deleted mapping stops at once (token callers only; super_admin needs none).
 */
export async function rolesInWorkspace(
  principal: Principal,
  workspace: Workspace,
): Promise<Principal['roles']> {
  if (!principal.claims || principal.superAdmin || (workspace.claim_mapping_count ?? 0) === 0) {
    return principal.roles;
  }
  const role = resolveRole(await claimMappingRepository().all(workspace.id), principal.claims);
  return role ? dictionary([...Object.entries(principal.roles), [workspace.id, role]]) : principal.roles;
}

/**
 * May the principal call a `manage` operation in this workspace? The same engine as every
 * workspace route (roles by id or name, claim mappings resolved per request, custom roles'
 * policies) for the operations that are not under a `{workspace}` path (deletions).
 */
export async function mayManageWorkspace(
  principal: Principal,
  workspaceId: string,
  operationId: string,
): Promise<boolean> {
  if (principal.superAdmin) return true;
  const workspace = await workspaceRepository().findById(workspaceId);
  if (!workspace) return false;
  const caller = { ...principal, roles: await rolesInWorkspace(principal, workspace) };
  try {
    await authorize(caller, { operationId, permission: 'manage' }, workspace, loadPolicies);
    return true;
  } catch {
    return false;
  }
}
