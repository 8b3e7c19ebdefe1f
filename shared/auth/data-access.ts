/**
 * The data plane's edge of the access decision (ADR 0120): builds the domain's caller from the
 * principal the authorizer produced (the refusals are the domain's `requireDataAccess`).
 */
import type { DataCaller } from '#domain/data-access.ts';
import { type PolicyLoader, policiesOf, roleIn } from './permissions.ts';
import type { Principal } from './principal.ts';

/**
 * The caller of a data-plane request: anonymous without a principal; otherwise its role in the
 * workspace (give it the roles with claim mappings applied, `rolesInWorkspace`) and that role's
 * policies, read through the same `policiesOf` as the management API.
 */
export async function dataCaller(
  principal: Principal | undefined,
  workspace: { id: string; name: string },
  loadPolicies: PolicyLoader,
): Promise<DataCaller> {
  if (!principal) return { kind: 'anonymous' };
  if (principal.superAdmin) return { kind: 'principal', superAdmin: true };
  const role = roleIn(principal, workspace);
  if (!role) return { kind: 'principal', superAdmin: false };
  return {
    kind: 'principal',
    superAdmin: false,
    role: { id: role, policies: await policiesOf(role, loadPolicies) },
  };
}
