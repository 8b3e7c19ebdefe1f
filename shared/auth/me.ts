import { resolveWorkspace, type WorkspaceRepository } from '../domain/workspaces.ts';
import type { Principal } from './principal.ts';

/** The AuthMe body: who the caller is and the workspaces they hold a role in. */
export async function describePrincipal(repo: WorkspaceRepository, principal: Principal) {
  const workspaces: { id: string; name: string; role: string }[] = [];
  const seen = new Set<string>();
  for (const [idOrName, role] of Object.entries(principal.roles).slice(0, 100)) {
    const ws = await resolveWorkspace(repo, idOrName);
    if (ws && !seen.has(ws.id)) {
      seen.add(ws.id);
      workspaces.push({ id: ws.id, name: ws.name, role });
    }
  }
  return {
    authenticated: true as const,
    principal: principal.subject,
    auth_method: principal.authMethod,
    super_admin: principal.superAdmin,
    api_key_id: principal.apiKeyId ?? null,
    session_id: null,
    workspaces,
  };
}
