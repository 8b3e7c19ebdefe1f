import {
  type ClaimMappingRepository,
  claimPairs,
  GLOBAL_SCOPE,
  resolveRole,
} from '#domain/claim-mappings.ts';
import { own } from '#domain/dictionary.ts';
import { mapLimited } from '#domain/jobs.ts';
import { resolveWorkspace, type WorkspaceRepository } from '#domain/workspaces.ts';
import type { Principal } from './principal.ts';

const MAX_WORKSPACES = 100;

/** Workspaces read at once. */
const WORKSPACE_READS = 16;

/**
 * The AuthMe body: who the caller is, its session, and the workspaces it holds a role in —
 * from its key or trusted claims, and from the workspace claim mappings its token matches.
 */
export async function describePrincipal(
  { workspaces, claimMappings }: { workspaces: WorkspaceRepository; claimMappings: ClaimMappingRepository },
  { principal }: { principal: Principal },
) {
  const roles = new Map<string, string>();
  for (const [idOrName, role] of Object.entries(principal.roles))
    if (idOrName !== '*') roles.set(idOrName, role);
  if (principal.claims) {
    const byScope = new Map<string, Awaited<ReturnType<ClaimMappingRepository['findByClaims']>>>();
    for (const m of await claimMappings.findByClaims(claimPairs(principal.claims))) {
      if (m.workspace_id === GLOBAL_SCOPE) continue;
      byScope.set(m.workspace_id, [...(byScope.get(m.workspace_id) ?? []), m]);
    }
    for (const [workspaceId, mappings] of byScope) {
      const role = resolveRole(mappings, principal.claims);
      if (role) roles.set(workspaceId, role);
    }
  }
  const found: { id: string; name: string; role: string }[] = [];
  const seen = new Set<string>();
  // Resolved together, a few at a time (a caller may hold roles in up to 100), kept in order.
  const entries = [...roles].slice(0, MAX_WORKSPACES);
  const resolved = await mapLimited(entries, WORKSPACE_READS, ([idOrName]) =>
    resolveWorkspace(workspaces, idOrName),
  );
  for (const [i, [, role]] of entries.entries()) {
    const ws = resolved[i];
    if (ws && !seen.has(ws.id)) {
      seen.add(ws.id);
      found.push({ id: ws.id, name: ws.name, role });
    }
  }
  return {
    authenticated: true as const,
    principal: principal.subject,
    auth_method: principal.authMethod,
    super_admin: principal.superAdmin,
    global_role: principal.superAdmin ? 'super_admin' : (own(principal.roles, '*') ?? null),
    api_key_id: principal.apiKeyId ?? null,
    session_id: principal.session?.id ?? null,
    session_expires_at: principal.session?.expiresAt ?? null,
    session_idle_expires_at: principal.session?.idleExpiresAt ?? null,
    workspaces: found,
  };
}
