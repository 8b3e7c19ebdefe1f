import { resolveRole } from '../domain/claim-mappings.ts';
import { claimMappingRepository, roleRepository, workspaceRepository } from '../store/repositories.ts';
import { authorize } from './permissions.ts';
import type { Principal } from './principal.ts';

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
  let caller = principal;
  if (principal.claims && (workspace.claim_mapping_count ?? 0) > 0) {
    const role = resolveRole(await claimMappingRepository().all(workspace.id), principal.claims);
    if (role) caller = { ...principal, roles: { ...principal.roles, [workspace.id]: role } };
  }
  try {
    await authorize(caller, { operationId, permission: 'manage' }, workspace, (roleId) =>
      roleRepository().listPolicies(roleId),
    );
    return true;
  } catch {
    return false;
  }
}
