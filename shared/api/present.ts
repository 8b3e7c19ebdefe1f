import type { Role } from '../domain/roles.ts';
import { systemRoleIds } from '../domain/roles.ts';
import type { Workspace } from '../domain/workspaces.ts';

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
