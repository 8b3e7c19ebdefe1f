import { resolveRole } from '#domain/claim-mappings.ts';
import type { TargetRecords } from '#domain/request-targets.ts';
import { type KnownService, type Service, WITHHELD_SECRET } from '#domain/services.ts';
import type { KnownWorkspace, Workspace } from '#domain/workspaces.ts';
import type { RequestTarget } from './authenticate.ts';

/** Context keys of the targets the authorizer resolved (ADR 0099). */
const WORKSPACE_KEY = 'workspaceLookup';
const SERVICE_KEY = 'serviceLookup';
const CLAIM_ROLE_KEY = 'claimRole';

/**
 * The most characters one target may take in the authorizer context (ADR 0099). A workspace is
 * ~0.4 KB plus its description (≤ 1024 characters), a service ~0.6 KB plus its connection; one that
 * is larger is not carried and the handler reads it.
 */
export const MAX_TARGET_JSON = 4096;

/** The role a token's claims earn in a workspace by its mappings, as the authorizer resolved it (ADR 0103). */
export interface KnownClaimRole {
  workspaceId: string;
  /** Absent: no mapping of the workspace matches the claims. */
  role?: string;
}

function decoded(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The `{workspace}` and `{service}` of a request's path parameters, decoded as makeHandler decodes them. */
export function targetOf(
  pathParameters: Record<string, string | undefined> | null | undefined,
): RequestTarget {
  const workspace = decoded(pathParameters?.workspace);
  const service = workspace === undefined ? undefined : decoded(pathParameters?.service);
  return {
    ...(workspace !== undefined ? { workspace } : {}),
    ...(service !== undefined ? { service } : {}),
  };
}

function bounded(value: unknown): string | undefined {
  const text = JSON.stringify(value);
  return text.length <= MAX_TARGET_JSON ? text : undefined;
}

/**
 * The targets as authorizer context values: each `{p: parameter, v: record | null}` as JSON (the
 * service with its workspace id `w` and its encrypted password withheld), or nothing when
 * undecided or too large.
 */
export function targetContext(
  records: TargetRecords | undefined,
  claims?: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const ws = records?.workspace;
  const workspace = ws ? bounded({ p: ws.idOrName, v: ws.workspace ?? null }) : undefined;
  if (workspace === undefined) return out;
  out[WORKSPACE_KEY] = workspace;
  // The role the token's claims earn in the workspace by its mappings (ADR 0103): `r` null when none.
  const rules = records?.workspaceRules;
  if (claims && rules && rules.workspaceId === ws?.workspace?.id) {
    out[CLAIM_ROLE_KEY] = JSON.stringify({
      w: rules.workspaceId,
      r: resolveRole(rules.rules, claims) ?? null,
    });
  }
  const svc = records?.service;
  if (svc) {
    const withheld = svc.service?.password_enc
      ? { ...svc.service, password_enc: WITHHELD_SECRET }
      : svc.service;
    const service = bounded({ p: svc.idOrName, w: svc.workspaceId, v: withheld ?? null });
    if (service !== undefined) out[SERVICE_KEY] = service;
  }
  return out;
}

function parsed(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    const value = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A record as carried: null (does not exist), an object with string `id` and `name`, or not usable. */
function recordOf(value: unknown): Record<string, unknown> | null | undefined {
  if (value === null) return null;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  return typeof r.id === 'string' && typeof r.name === 'string' && typeof r.status === 'string'
    ? r
    : undefined;
}

/**
 * The targets the authorizer resolved, from the handler's `requestContext.authorizer` (set by API
 * Gateway, or by the local host, never by the client); undefined parts are read by the handler.
 */
export function knownTargets(ctx: Record<string, unknown> | null | undefined): {
  workspace?: KnownWorkspace;
  service?: KnownService;
  claimRole?: KnownClaimRole;
} {
  const ws = parsed(ctx?.[WORKSPACE_KEY]);
  const workspace = recordOf(ws?.v);
  if (!ws || typeof ws.p !== 'string' || workspace === undefined) return {};
  const known: { workspace: KnownWorkspace; service?: KnownService; claimRole?: KnownClaimRole } = {
    workspace: { idOrName: ws.p, workspace: (workspace ?? undefined) as Workspace | undefined },
  };
  const role = parsed(ctx?.[CLAIM_ROLE_KEY]);
  if (role && typeof role.w === 'string' && (role.r === null || typeof role.r === 'string')) {
    known.claimRole = { workspaceId: role.w, ...(role.r === null ? {} : { role: role.r as string }) };
  }
  const svc = parsed(ctx?.[SERVICE_KEY]);
  const service = recordOf(svc?.v);
  if (svc && typeof svc.p === 'string' && typeof svc.w === 'string' && service !== undefined) {
    known.service = {
      idOrName: svc.p,
      workspaceId: svc.w,
      service: (service ?? undefined) as Service | undefined,
    };
  }
  return known;
}
