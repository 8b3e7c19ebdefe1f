import { presentPolicy } from '#domain/role-policies.ts';
import type { Role, RoleDeletionPlan, WorkspaceRolesPage } from '#domain/roles.ts';
import { systemRoleIds } from '#domain/roles.ts';
import { type ListedSession, listedSessionVersion } from '#domain/sessions.ts';
import type { Workspace } from '#domain/workspaces.ts';

/** The API view of a workspace (internal `status` left out). */
export function presentWorkspace(ws: Workspace) {
  const { status: _status, claim_mapping_count: _mappings, usage_slot: _slot, usage_key: _key, ...rest } = ws;
  return rest;
}

/** The API view of a custom role. */
export function presentRole(role: Role) {
  return {
    id: role.id,
    name: role.name,
    ...(role.description ? { description: role.description } : {}),
    is_system: false,
    version: role.version,
    created_at: role.created_at,
    updated_at: role.updated_at,
  };
}

/** The four built-in roles as the API shows them. */
export const systemRoles = systemRoleIds.map((id) => ({ id, name: id, is_system: true }));

/** The API view of the roles assignable in a workspace, with what may carry each (ADR 0131). */
export function presentWorkspaceRoles(page: WorkspaceRolesPage) {
  return {
    roles: [
      ...page.builtIns.map((id) => ({
        id,
        name: id,
        is_system: true,
        assignable_to: ['api_keys', 'claim_mappings'] as const,
      })),
      ...page.custom.map((role) => ({ ...presentRole(role), assignable_to: ['claim_mappings'] as const })),
    ],
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  };
}

/** The API view of a listed browser session (ADR 0134): named fields only, so no hash can leak. */
export function presentBrowserSession(s: ListedSession) {
  return {
    id: s.session_id,
    principal: s.principal,
    principal_id: s.principal_id,
    auth_method: s.auth_method,
    api_key_id: s.api_key_id ?? null,
    issuer: s.issuer ?? null,
    super_admin: s.super_admin,
    workspace_roles: s.workspace_roles,
    workspace_role_count: s.workspace_role_count,
    created_at: s.created_at,
    refreshed_at: s.refreshed_at ?? null,
    expires_at: s.expires_at,
    idle_expires_at: s.idle_expires_at,
    version: listedSessionVersion(s),
  };
}

/** The API view of a role's deletion plan (ADR 0135). */
export function presentRoleDeletionPlan(plan: RoleDeletionPlan) {
  const references = plan.role.ref_count ?? 0;
  return {
    role_id: plan.role.id,
    deletable: references <= 0,
    references,
    claim_mappings: plan.references.flatMap((r) =>
      r.kind === 'claim_mapping' ? [{ workspace_id: r.workspace_id ?? null, id: r.id }] : [],
    ),
    layers: plan.references.flatMap((r) =>
      r.kind === 'layer' ? [{ workspace_id: r.workspace_id, service_id: r.service_id, id: r.id }] : [],
    ),
    unrecorded: plan.unrecorded,
    policies: plan.policies.map(presentPolicy),
    api_keys: 0,
    sessions: 0,
  };
}
