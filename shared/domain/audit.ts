import { InvalidInputError } from './errors.ts';
import type { Page } from './page.ts';

/*
 * The audit trail (ADR 0094): one record per committed change of the catalog, written in the
 * transaction of the change, and one per refused mutating request. The catalog events are read
 * from the records of committed changes (catalog-events.ts).
 */

/** What happened to one entity. */
export type ChangeAction = 'created' | 'updated' | 'deleted';

/** One entity a change touched. */
export interface AuditChange {
  /** The entity's type as the API names it: `workspace`, `layer`, `api_key`, … */
  type: string;
  id: string;
  workspace_id?: string;
  /** The entity it belongs to where its id alone is not unique (a layer's service, a policy's role). */
  parent_id?: string;
  action: ChangeAction;
  /** The entity's version after the change, where it has one (absent for deletions). */
  version?: number;
  /** The status the change set (deletions and imports; a service or workspace being deleted). */
  status?: string;
}

/** Who made a change: a principal id (`apikey:<id>`, `jwt:<sub>`) or `system…`, never a secret. */
export interface AuditPrincipal {
  id: string;
  auth_method: string;
  subject?: string;
}

/** One audit record. */
export interface AuditRecord {
  id: string;
  at: string;
  workspace_id?: string;
  operation: string;
  principal: AuditPrincipal;
  request_id: string;
  /** `succeeded`: the change committed; `refused`: the request was answered 4xx and changed nothing. */
  outcome: 'succeeded' | 'refused';
  /** The HTTP status of a refused request. */
  status?: number;
  /** The error `reason` of a refused request. */
  reason?: string;
  changes: AuditChange[];
  /**
   * A refusal's record counts the caller's refusals of its kind within its window (ADR 0109):
   * how many, the first (`at`, `request_id`) and the last of them.
   */
  count?: number;
  last_at?: string;
  last_request_id?: string;
}

/** The filters of an audit listing (all optional; `since`/`until` inclusive ISO times). */
export interface AuditFilter {
  operation?: string;
  principal?: string;
  outcome?: AuditRecord['outcome'];
  since?: string;
  until?: string;
}

/** Whose trail a listing reads: one workspace's, or every record (super_admin). */
export type AuditScope = { workspaceId: string } | 'all';

/** Port: the audit trail's reader. */
export interface AuditTrail {
  list(scope: AuditScope, filter: AuditFilter, limit: number, cursor?: string): Promise<Page<AuditRecord>>;
}

/** A refused mutating request, as its audit record tells it. */
export interface Refusal {
  principal: AuditPrincipal;
  operation: string;
  requestId: string;
  workspaceId?: string;
  status: number;
  reason: string;
}

/**
 * Refused requests are tallied (ADR 0109): one record per caller, operation, workspace, status and
 * reason in each window of this many seconds, with a count. A flood of refusals writes one record
 * per kind and window, so the trail stays readable and bounded; the first refusal is recorded as
 * before (`at`, `request_id`), the last one and the count are added to it.
 */
export const REFUSAL_WINDOW_SECONDS = 60;

/** What makes two refusals the same kind: who, which operation, where, and why. */
export function refusalKind(refusal: Refusal): string {
  return JSON.stringify([
    refusal.workspaceId ?? '',
    refusal.principal.id,
    refusal.operation,
    refusal.status,
    refusal.reason,
  ]);
}

/** The window a refusal at `nowMs` is tallied in. */
export function refusalWindow(nowMs: number): number {
  return Math.floor(nowMs / (REFUSAL_WINDOW_SECONDS * 1000));
}

/** Port: the audit trail's writer for refused requests (committed changes write their own). */
export interface RefusalLog {
  recordRefusal(refusal: Refusal): Promise<void>;
}

/** The filter with its window normalised to UTC ISO strings; 400 for an empty window. */
export function auditFilter(query: AuditFilter): AuditFilter {
  const since = query.since ? new Date(query.since).toISOString() : undefined;
  const until = query.until ? new Date(query.until).toISOString() : undefined;
  if (since && until && since > until) {
    throw new InvalidInputError('invalid_time_window', '`since` must not be later than `until`.');
  }
  return {
    ...(query.operation ? { operation: query.operation } : {}),
    ...(query.principal ? { principal: query.principal } : {}),
    ...(query.outcome ? { outcome: query.outcome } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
}

/** A page of the trail, newest first, as the API answers it. */
export async function listAudit(
  { trail }: { trail: AuditTrail },
  { scope, query }: { scope: AuditScope; query: AuditFilter & { limit: number; cursor?: string } },
): Promise<{ records: AuditRecord[]; next_cursor?: string }> {
  const page = await trail.list(scope, auditFilter(query), query.limit, query.cursor);
  return { records: page.items, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
}
