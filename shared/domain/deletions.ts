import { randomUUID } from 'node:crypto';
import { DependencyConflictError, NotFoundError, StateConflictError } from './errors.ts';
import type { Page } from './page.ts';
import type { Service } from './services.ts';
import type { WorkflowStarter } from './workflows.ts';
import { resolveWorkspace, uuidPattern, type Workspace, type WorkspaceRepository } from './workspaces.ts';

export type DeletionScope = 'service' | 'workspace';
export type DeletionStatus = 'pending' | 'running' | 'failed' | 'completed';

/**
 * Where a deletion stands. A service goes `layer_groups → layers → mosaic → target`; a workspace
 * `layers → api_keys → claim_mappings → settings → workspace_items → target`. `done` at the end.
 */
export type DeletionPhase =
  | 'layer_groups'
  | 'layers'
  | 'mosaic'
  | 'api_keys'
  | 'claim_mappings'
  | 'settings'
  | 'workspace_items'
  | 'target'
  | 'done';

export const servicePhases: readonly DeletionPhase[] = ['layer_groups', 'layers', 'mosaic', 'target', 'done'];
export const workspacePhases: readonly DeletionPhase[] = [
  'layers',
  'api_keys',
  'claim_mappings',
  'settings',
  'workspace_items',
  'target',
  'done',
];

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

/** Port: deletion persistence, the hide/start transactions and the plans. */
export interface DeletionRepository {
  servicePlan(service: Service): Promise<DeletionPlan>;
  workspacePlan(workspace: Workspace): Promise<DeletionPlan>;
  /** Deletes a service with no dependents in one transaction; false when dependents appeared. */
  deleteEmptyService(service: Service): Promise<boolean>;
  /** Hides the service and records the operation in one transaction (the active one if there is one). */
  startServiceDeletion(service: Service, op: DeletionOperation, plan: DeletionPlan): Promise<StartedDeletion>;
  startWorkspaceDeletion(
    workspace: Workspace,
    op: DeletionOperation,
    plan: DeletionPlan,
  ): Promise<StartedDeletion>;
  find(id: string): Promise<StartedDeletion | undefined>;
  list(filter: DeletionFilter, limit: number, cursor?: string): Promise<Page<DeletionOperation>>;
  plansOf(ids: string[]): Promise<Map<string, DeletionPlan>>;
  /** failed → pending with attempt_count + 1 (a service's workspace must still be active). */
  markRetry(op: DeletionOperation, now: string): Promise<DeletionOperation>;
}

/** Plans list this many dependents of each kind (the counts are exact). */
export const PLAN_LIST_LIMIT = 100;

/** The Step Functions execution name of an attempt: the operation id, then `<id>-attempt-<n>`. */
export function executionName(op: Pick<DeletionOperation, 'id' | 'attempt_count'>): string {
  return op.attempt_count <= 1 ? op.id : `${op.id}-attempt-${op.attempt_count}`;
}

export function isActive(op: DeletionOperation): boolean {
  return op.status === 'pending' || op.status === 'running';
}

/** An active operation with no progress for this long is presumed stalled: retry may start a new attempt. */
export const STALLED_AFTER_MS = 10 * 60 * 1000;

export function isStalled(op: DeletionOperation, now: Date): boolean {
  return isActive(op) && now.getTime() - Date.parse(op.updated_at) > STALLED_AFTER_MS;
}

/** Starts (or re-starts, idempotently) the execution of the operation's current attempt. */
function startAttempt(starter: WorkflowStarter, op: DeletionOperation): Promise<void> {
  return starter.startDeletion(executionName(op), { operation_id: op.id, attempt: op.attempt_count });
}

function newOperation(
  scope: DeletionScope,
  workspace: Workspace,
  target: { id: string; name: string },
  plan: DeletionPlan,
  createdBy: string,
  now: Date,
): DeletionOperation {
  const ts = now.toISOString();
  return {
    id: randomUUID(),
    scope,
    workspace_id: workspace.id,
    workspace_name: workspace.name,
    target_id: target.id,
    target_name: target.name,
    status: 'pending',
    phase: scope === 'service' ? 'layer_groups' : 'layers',
    progress: { total: plan.total, deleted: 0 },
    attempt_count: 1,
    created_at: ts,
    updated_at: ts,
    created_by: createdBy,
  };
}

/** The outcome of DELETE on a service: gone (204) or an operation (202). */
export type ServiceDeletionOutcome = { deleted: true } | StartedDeletion;

function hasDependents(plan: DeletionPlan): boolean {
  return plan.layers.count > 0 || plan.layer_groups.count > 0 || plan.mosaic_granules > 0;
}

function conflict(plan: DeletionPlan, what: string) {
  return new DependencyConflictError(
    'service_has_dependencies',
    `${what} has dependents (${plan.layers.count} layer(s), ${plan.layer_groups.count} layer group(s), ${plan.mosaic_granules} mosaic granule record(s)); delete with recurse=true to remove them all.`,
    { recurse_required: true, plan },
  );
}

/** The operation that hid a target, (re)started as `retry` would; undefined when there is none. */
async function resumeExisting(
  repo: DeletionRepository,
  starter: WorkflowStarter,
  deletionId: string | undefined,
  now: Date,
): Promise<StartedDeletion | undefined> {
  const found = deletionId ? await repo.find(deletionId) : undefined;
  if (!found) return undefined;
  return { operation: await retry(repo, starter, found.operation, now), plan: found.plan };
}

/** Records a new operation with the transaction that hides its target, then starts its workflow. */
async function start(starter: WorkflowStarter, stored: Promise<StartedDeletion>): Promise<StartedDeletion> {
  const started = await stored;
  if (isActive(started.operation)) await startAttempt(starter, started.operation);
  return started;
}

/**
 * deleteService (spec 4.3): an empty service goes at once; one with dependents is a 409 with the
 * plan unless `recurse`; with it, the service is hidden and a workflow removes the rest. A service
 * already being deleted answers with its operation.
 */
export async function deleteService(
  repo: DeletionRepository,
  starter: WorkflowStarter,
  workspace: Workspace,
  service: Service,
  recurse: boolean,
  createdBy: string,
  now = new Date(),
): Promise<ServiceDeletionOutcome> {
  if (service.status === 'deleting') {
    const existing = recurse ? await resumeExisting(repo, starter, service.deletion_id, now) : undefined;
    if (!existing) {
      throw new NotFoundError(
        'service_not_found',
        `Service '${service.name}' does not exist in this workspace.`,
      );
    }
    return existing;
  }
  let plan = await repo.servicePlan(service);
  if (!hasDependents(plan)) {
    if (await repo.deleteEmptyService(service)) return { deleted: true };
    // Something was added meanwhile: plan again (the answer names it).
    plan = await repo.servicePlan(service);
  }
  if (!recurse) throw conflict(plan, `Service '${service.name}'`);
  const op = newOperation('service', workspace, service, plan, createdBy, now);
  return start(starter, repo.startServiceDeletion(service, op, plan));
}

/** deleteWorkspace with `recurse=true`: hides the workspace and starts the workflow. */
export async function deleteWorkspaceRecursively(
  repo: DeletionRepository,
  starter: WorkflowStarter,
  workspace: Workspace,
  createdBy: string,
  now = new Date(),
): Promise<StartedDeletion> {
  if (workspace.status === 'deleting') {
    const existing = await resumeExisting(repo, starter, workspace.deletion_id, now);
    if (!existing) {
      throw new StateConflictError(
        'workspace_being_deleted',
        `Workspace '${workspace.name}' is being deleted.`,
      );
    }
    return existing;
  }
  const plan = await repo.workspacePlan(workspace);
  const op = newOperation('workspace', workspace, workspace, plan, createdBy, now);
  return start(starter, repo.startWorkspaceDeletion(workspace, op, plan));
}

/**
 * retryDeletion: a failed operation starts again where it stopped (attempt_count + 1), and so does
 * a stalled one (active without progress for 10 minutes: its execution timed out or was lost; an
 * older attempt's execution stops at its next step); a pending or running one is (re)started under
 * its current execution name; a completed one is unchanged.
 */
export async function retry(
  repo: DeletionRepository,
  starter: WorkflowStarter,
  op: DeletionOperation,
  now = new Date(),
): Promise<DeletionOperation> {
  if (op.status === 'completed') return op;
  const next =
    op.status === 'failed' || isStalled(op, now) ? await repo.markRetry(op, now.toISOString()) : op;
  await startAttempt(starter, next);
  return next;
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

/** Where an operation's status is read. */
export function deletionLocation(id: string): string {
  return `/api/v1/deletions/${id}`;
}

/** Who may see an operation: super_admin, and admins of its workspace (a workspace's own: super_admin). */
async function visible(
  op: DeletionOperation,
  principal: { superAdmin: boolean },
  mayManage: (workspaceId: string) => Promise<boolean>,
): Promise<boolean> {
  if (principal.superAdmin) return true;
  if (op.scope === 'workspace') return false;
  return mayManage(op.workspace_id);
}

/** Reads an operation the caller may see; anything else is the same 404 (no existence leak). */
export async function requireVisibleDeletion(
  repo: DeletionRepository,
  id: string,
  principal: { superAdmin: boolean },
  mayManage: (workspaceId: string) => Promise<boolean>,
): Promise<{ operation: DeletionOperation; plan: DeletionPlan }> {
  const found = await repo.find(id.toLowerCase());
  if (!found || !(await visible(found.operation, principal, mayManage))) {
    throw new NotFoundError('deletion_not_found', `Deletion operation '${id}' does not exist.`);
  }
  return found;
}

/**
 * The listing filter: the named workspace — by id as given (it may be gone: its own deletion), by
 * name only while it exists — else, for a caller with a role in exactly one workspace (a workspace
 * API key), that one, so the filter runs in DynamoDB instead of dropping others page by page.
 */
export async function deletionFilter(
  principal: { superAdmin: boolean; roles: Record<string, string> },
  query: { workspace?: string; status?: DeletionStatus },
  workspaces: WorkspaceRepository,
): Promise<DeletionFilter> {
  const own = Object.keys(principal.roles);
  const named =
    query.workspace ?? (!principal.superAdmin && own.length === 1 && own[0] !== '*' ? own[0] : undefined);
  if (named === undefined) return { status: query.status };
  const workspaceId = uuidPattern.test(named)
    ? named.toLowerCase()
    : ((await resolveWorkspace(workspaces, named))?.id ?? 'unknown');
  return { workspaceId, status: query.status };
}

/** One page of the operations the caller may see, newest first, with their plans. */
export async function listVisibleDeletions(
  repo: DeletionRepository,
  filter: DeletionFilter,
  limit: number,
  cursor: string | undefined,
  principal: { superAdmin: boolean },
  mayManage: (workspaceId: string) => Promise<boolean>,
) {
  const page = await repo.list(filter, limit, cursor);
  const decisions = new Map<string, Promise<boolean>>();
  const allowed: DeletionOperation[] = [];
  for (const op of page.items) {
    const key = `${op.scope}:${op.workspace_id}`;
    if (!decisions.has(key)) decisions.set(key, visible(op, principal, mayManage));
    if (await decisions.get(key)) allowed.push(op);
  }
  const plans = await repo.plansOf(allowed.map((op) => op.id));
  return {
    deletions: allowed.map((op) => presentDeletion(op, plans.get(op.id))),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  };
}
