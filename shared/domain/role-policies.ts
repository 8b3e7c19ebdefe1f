import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { currentOperationId } from './renamed-operations.ts';
import {
  isSystemRole,
  type ManagementCatalog,
  normalisePolicy,
  type PolicyAction,
  type PolicyService,
  policyId,
  type RoleCommand,
  type RoleRepository,
  requireCustomRole,
  type StoredPolicy,
} from './roles.ts';
import { checkVersion, IMMUTABLE_VERSION, resolveWorkspace, type WorkspaceRepository } from './workspaces.ts';

/**
 * Grants a rule to a custom role (spec 4.20). The workspace is stored as its id; an unknown
 * workspace or an impossible service/operation/action combination is a 422.
 */
export async function addRolePolicy(
  {
    roles,
    workspaces,
    catalog,
  }: { roles: RoleRepository; workspaces: WorkspaceRepository; catalog: ManagementCatalog },
  {
    roleId,
    body: input,
    now = new Date(),
  }: RoleCommand & {
    body: { workspace: string; service: PolicyService; operation?: string; action: PolicyAction };
    now?: Date;
  },
): Promise<StoredPolicy> {
  if (isSystemRole(roleId)) {
    throw new InvalidInputError('system_role', `'${roleId}' is a built-in role; its policies are fixed.`);
  }
  await requireCustomRole(roles, roleId);
  const rule = normalisePolicy(input, catalog);
  let workspace = input.workspace.trim();
  if (workspace !== '*') {
    const ws = await resolveWorkspace(workspaces, workspace);
    if (!ws) throw new RuleViolationError('invalid_policy', `Workspace '${workspace}' does not exist.`);
    workspace = ws.id;
  }
  const policy = { workspace, ...rule };
  const stored: StoredPolicy = { id: policyId(policy), ...policy, created_at: now.toISOString() };
  await roles.putPolicy(roleId, stored);
  return stored;
}

/**
 * The API view of a stored policy (`version` is constant: a policy never changes). A management
 * policy stored under an operation's old id shows the current id, the one it grants (ADR 0132).
 */
export function presentPolicy(policy: StoredPolicy) {
  const operation = policy.service === 'management' ? currentOperationId(policy.operation) : policy.operation;
  return { ...policy, operation, version: IMMUTABLE_VERSION };
}

/** The ETag of any policy (ADR 0087). */
export const policyTag = `"${IMMUTABLE_VERSION}"`;

/**
 * Removes one policy of a custom role. A policy never changes (its id is the digest of its rule):
 * its ETag is `"1"` for its whole life, and If-Match is checked against that (ADR 0087).
 */
export async function removeRolePolicy(
  { roles }: { roles: RoleRepository },
  { roleId, policyId: id, ifMatch }: RoleCommand & { policyId: string; ifMatch?: string },
): Promise<void> {
  await requireCustomRole(roles, roleId);
  checkVersion({ version: IMMUTABLE_VERSION }, ifMatch);
  if (!(await roles.deletePolicy(roleId, id))) {
    throw new NotFoundError('policy_not_found', `Role '${roleId}' has no policy '${id}'.`);
  }
}
