/**
 * The deletion operation and its plan as data, with the rules over them (ADR 0070): which
 * dependents block a plain delete, whether an operation is active or stalled, how it is presented.
 * `deletions.ts` re-exports all of it; the use cases live there.
 */
import { DependencyConflictError } from './errors.ts';

export type DeletionScope = 'service' | 'workspace';
export type DeletionStatus = 'pending' | 'running' | 'failed' | 'completed';

/**
 * Where a deletion stands. A service goes `layer_groups → layers → mosaic → mosaic_jobs → target`
 * (`mosaic_jobs`: its harvest jobs, ADR 0136); a workspace
 * `layers → api_keys → claim_mappings → settings → workspace_items → target`. `done` at the end.
 */
export type DeletionPhase =
  | 'layer_groups'
  | 'layers'
  | 'mosaic'
  | 'mosaic_jobs'
  | 'api_keys'
  | 'claim_mappings'
  | 'settings'
  | 'workspace_items'
  | 'target'
  | 'done';

/** One dependent named in a plan. */
export interface PlanEntry {
  id: string;
  public_id?: string;
  name?: string;
  service_id?: string;
}

/** Dependents of one kind: the exact count and the first `PLAN_LIST_LIMIT` of them. */
export interface PlanSection {
  count: number;
  items: PlanEntry[];
  truncated: boolean;
}

/** Everything a deletion removes or changes (ADR 0070). */
export interface DeletionPlan {
  target: { scope: DeletionScope; id: string; name: string; type?: string };
  layers: PlanSection;
  /** Groups removed with them: the transitive closure of groups containing the layers (or those groups). */
  layer_groups: PlanSection;
  /** Granule records of a raster mosaic (every generation). */
  mosaic_granules: number;
  /** Styles whose layer reference count drops (they stay). */
  style_references: { style: string; references: number }[];
  /** Custom roles whose reference count drops (they stay). */
  role_references: { role_id: string; references: number }[];
  /** Workspace scope: the other catalog state that goes with it, counted by kind. */
  workspace_items?: Record<string, number>;
  /** Dependents the workflow removes (progress.total), the target included. */
  total: number;
}

/** The durable record of a recursive deletion (DeletionOperation of the spec). */
export interface DeletionOperation {
  id: string;
  scope: DeletionScope;
  workspace_id: string;
  workspace_name: string;
  target_id: string;
  target_name: string;
  status: DeletionStatus;
  phase: DeletionPhase;
  progress: { total: number; deleted: number };
  attempt_count: number;
  last_error?: string;
  created_at: string;
  updated_at: string;
  completed_at?: string;
  created_by: string;
  /** Write capacity units the workflow consumed (benchmark figure; not presented). */
  write_units?: number;
}

/** Listing filters; `workspaceIds` restricts to the workspaces the caller administers (undefined: all). */
export interface DeletionFilter {
  workspaceId?: string;
  status?: DeletionStatus;
}

/** An operation with its plan (what the API answers with). */
export interface StartedDeletion {
  operation: DeletionOperation;
  plan: DeletionPlan;
}

/** Plans list this many dependents of each kind (the counts are exact). */
export const PLAN_LIST_LIMIT = 100;

/** The Step Functions execution name of an attempt: the operation id, then `<id>-attempt-<n>`. */
export function executionName(op: Pick<DeletionOperation, 'id' | 'attempt_count'>): string {
  return op.attempt_count <= 1 ? op.id : `${op.id}-attempt-${op.attempt_count}`;
}

/** The execution input of the attempt (`DeletionWorkflowInput`): the same for whoever starts it, so a start is idempotent. */
export function deletionInput(op: Pick<DeletionOperation, 'id' | 'attempt_count'>): {
  operation_id: string;
  attempt: number;
} {
  return { operation_id: op.id, attempt: op.attempt_count };
}

export function isActive(op: DeletionOperation): boolean {
  return op.status === 'pending' || op.status === 'running';
}

/** An active operation with no progress for this long is presumed stalled: retry may start a new attempt. */
export const STALLED_AFTER_MS = 10 * 60 * 1000;

export function isStalled(op: DeletionOperation, now: Date): boolean {
  return isActive(op) && now.getTime() - Date.parse(op.updated_at) > STALLED_AFTER_MS;
}

/** Whether a plain DELETE must refuse: the service still has layers, groups or granules. */
export function hasDependents(plan: DeletionPlan): boolean {
  return plan.layers.count > 0 || plan.layer_groups.count > 0 || plan.mosaic_granules > 0;
}

/** The 409 of a plain DELETE of a service with dependents (it carries the plan). */
export function dependencyConflict(plan: DeletionPlan, what: string) {
  return new DependencyConflictError(
    'service_has_dependencies',
    `${what} has dependents (${plan.layers.count} layer(s), ${plan.layer_groups.count} layer group(s), ${plan.mosaic_granules} mosaic granule record(s)); delete with recurse=true to remove them all.`,
    { recurse_required: true, plan },
  );
}

/** The API view (DeletionOperation). */
export function presentDeletion(op: DeletionOperation, plan: DeletionPlan | undefined) {
  return {
    id: op.id,
    scope: op.scope,
    workspace_id: op.workspace_id,
    target_id: op.target_id,
    target_name: op.target_name,
    status: op.status,
    phase: op.phase,
    plan: plan ?? null,
    progress: { total: op.progress.total, deleted: Math.min(op.progress.deleted, op.progress.total) },
    attempt_count: op.attempt_count,
    ...(op.last_error ? { last_error: op.last_error } : {}),
    created_at: op.created_at,
    updated_at: op.updated_at,
    ...(op.completed_at ? { completed_at: op.completed_at } : {}),
  };
}
