import { randomUUID } from 'node:crypto';
import {
  type DeletionFilter,
  type DeletionOperation,
  type DeletionPlan,
  type DeletionScope,
  type DeletionStatus,
  deletionInput,
  dependencyConflict,
  executionName,
  hasDependents,
  isActive,
  isStalled,
  presentDeletion,
  type StartedDeletion,
} from './deletion-model.ts';
import { NotFoundError, StateConflictError } from './errors.ts';
import { UUID_PATTERN } from './identifiers.ts';
import type { Page } from './page.ts';
import type { Service } from './services.ts';
import type { WorkflowStarter } from './workflows.ts';
import {
  checkVersion,
  resolveWorkspace,
  underIfMatch,
  type Workspace,
  type WorkspaceRepository,
} from './workspaces.ts';

// The operation, its plan and the rules over them (deletion-model.ts); importers keep this path.
export * from './deletion-model.ts';

/** Port: deletion persistence, the hide/start transactions and the plans. */
export interface DeletionRepository {
  /**
   * With `recordCounts`, a plan may record what it counted for the next ones (ADR 0101): only the
   * deletion itself asks, never the read-only plan route.
   */
  servicePlan(service: Service, options?: { recordCounts?: boolean }): Promise<DeletionPlan>;
  workspacePlan(workspace: Workspace): Promise<DeletionPlan>;
  /**
   * active → deleting (the service's version unchanged): from then on no layer or granule can be
   * added under it, so its plan can't race with a create.
   */
  hideService(service: Service): Promise<void>;
  /** A service hidden by `hideService` becomes active again. */
  unhideService(service: Service): Promise<void>;
  /** Deletes a hidden service with its name marker (and an emptied mosaic's state item). */
  removeHiddenService(service: Service): Promise<void>;
  /**
   * Hides the service and records the operation in one transaction (the active one if there is
   * one). With `version` the service must still be at it (`concurrent_modification` otherwise).
   */
  startServiceDeletion(
    service: Service,
    op: DeletionOperation,
    plan: DeletionPlan,
    version?: number,
  ): Promise<StartedDeletion>;
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

/**
 * Starts (or re-starts, idempotently) the execution of the operation's current attempt. Without a
 * starter the operation is only recorded: the caller runs it (the import workflow's rollback runs
 * it as its nested execution, under the same name and input, ADR 0083).
 */
function startAttempt(starter: WorkflowStarter | undefined, op: DeletionOperation): Promise<void> {
  return starter ? starter.startDeletion(executionName(op), deletionInput(op)) : Promise.resolve();
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

/** The operation that hid a target, (re)started as `retry` would; undefined when there is none. */
async function resumeExisting(
  repo: DeletionRepository,
  starter: WorkflowStarter | undefined,
  deletionId: string | undefined,
  now: Date,
): Promise<StartedDeletion | undefined> {
  const found = deletionId ? await repo.find(deletionId) : undefined;
  if (!found) return undefined;
  return { operation: await retry(repo, starter, found.operation, now), plan: found.plan };
}

/**
 * Deletes a service with no dependents: hidden first, so the plan read then is final; false (and
 * the service active again) when dependents appeared meanwhile.
 */
async function deleteEmptyService(repo: DeletionRepository, service: Service): Promise<boolean> {
  await repo.hideService(service);
  if (hasDependents(await repo.servicePlan(service, { recordCounts: true }))) {
    await repo.unhideService(service);
    return false;
  }
  await repo.removeHiddenService(service);
  return true;
}

/** Records a new operation with the transaction that hides its target, then starts its workflow. */
async function start(
  starter: WorkflowStarter | undefined,
  stored: Promise<StartedDeletion>,
): Promise<StartedDeletion> {
  const started = await stored;
  if (isActive(started.operation)) await startAttempt(starter, started.operation);
  return started;
}

/** What a deletion works with: the store, and the workflow that runs it (absent: recorded only, see `startAttempt`). */
export interface DeletionDeps {
  deletions: DeletionRepository;
  starter?: WorkflowStarter;
}

/**
 * deleteService (spec 4.3): an empty service goes at once; one with dependents is a 409 with the
 * plan unless `recurse`; with it, the service is hidden and a workflow removes the rest. A service
 * already being deleted answers with its operation.
 */
export async function deleteService(
  { deletions: repo, starter }: DeletionDeps,
  command: {
    workspace: Workspace;
    service: Service;
    recurse: boolean;
    createdBy: string;
    now?: Date;
    ifMatch?: string;
  },
): Promise<ServiceDeletionOutcome> {
  const { workspace, service, recurse, createdBy, ifMatch } = command;
  const now = command.now ?? new Date();
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
  // If-Match names the version read; hiding the service is conditioned on it, so a concurrent
  // update between this check and the delete is a 412 too (ADR 0087).
  checkVersion(service, ifMatch);
  return underIfMatch(ifMatch, async () => {
    let plan = await repo.servicePlan(service, { recordCounts: true });
    if (!hasDependents(plan)) {
      if (await deleteEmptyService(repo, service)) return { deleted: true } as const;
      // Something was added meanwhile: plan again (the answer names it).
      plan = await repo.servicePlan(service, { recordCounts: true });
    }
    if (!recurse) throw dependencyConflict(plan, `Service '${service.name}'`);
    const op = newOperation('service', workspace, service, plan, createdBy, now);
    const atVersion = ifMatch === undefined ? undefined : service.version;
    return start(starter, repo.startServiceDeletion(service, op, plan, atVersion));
  });
}

/** deleteWorkspace with `recurse=true`: hides the workspace and starts the workflow. */
export async function deleteWorkspaceRecursively(
  { deletions: repo, starter }: DeletionDeps,
  command: { workspace: Workspace; createdBy: string; now?: Date },
): Promise<StartedDeletion> {
  const { workspace, createdBy } = command;
  const now = command.now ?? new Date();
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
 * getWorkspaceDeletionPlan (ADR 0131): what a recursive deletion of the workspace would remove —
 * the plan deleteWorkspace's 409 reports and a recursive deletion stores, from the same reading.
 */
export function workspaceDeletionPlan(
  { deletions }: { deletions: DeletionRepository },
  { workspace }: { workspace: Workspace },
): Promise<DeletionPlan> {
  return deletions.workspacePlan(workspace);
}

/**
 * getServiceDeletionPlan: what a recursive deletion of the service would remove — the plan
 * deleteService's 409 reports and a recursive deletion stores, from the same reading.
 */
export function serviceDeletionPlan(
  { deletions }: { deletions: DeletionRepository },
  { service }: { service: Service },
): Promise<DeletionPlan> {
  return deletions.servicePlan(service);
}

/**
 * retryDeletionOperation: a failed operation starts again where it stopped (attempt_count + 1), and so does
 * a stalled one (active without progress for 10 minutes: its execution timed out or was lost; an
 * older attempt's execution stops at its next step); a pending or running one is (re)started under
 * its current execution name; a completed one is unchanged.
 */
export async function retry(
  repo: DeletionRepository,
  starter: WorkflowStarter | undefined,
  op: DeletionOperation,
  now = new Date(),
): Promise<DeletionOperation> {
  if (op.status === 'completed') return op;
  const next =
    op.status === 'failed' || isStalled(op, now) ? await repo.markRetry(op, now.toISOString()) : op;
  await startAttempt(starter, next);
  return next;
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
  const workspaceId = UUID_PATTERN.test(named)
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

/** Whether the caller may manage a workspace (its admins; `shared/auth` decides, ADR 0109). */
type MayManage = (workspaceId: string) => Promise<boolean>;

/**
 * retryDeletionOperation: an operation the caller may see (404 otherwise) is started again — a
 * failed or stalled one from where it stopped; a completed one answers as it is.
 */
export async function retryDeletionOperation(
  {
    deletions,
    starter,
    mayManage,
  }: { deletions: DeletionRepository; starter: WorkflowStarter; mayManage: MayManage },
  { id, principal, now = new Date() }: { id: string; principal: { superAdmin: boolean }; now?: Date },
): Promise<StartedDeletion> {
  const { operation, plan } = await requireVisibleDeletion(deletions, id, principal, mayManage);
  return { operation: await retry(deletions, starter, operation, now), plan };
}

/** getDeletionOperation: an operation the caller may see, with its plan (404 otherwise). */
export function getDeletionOperation(
  { deletions, mayManage }: { deletions: DeletionRepository; mayManage: MayManage },
  { id, principal }: { id: string; principal: { superAdmin: boolean } },
): Promise<StartedDeletion> {
  return requireVisibleDeletion(deletions, id, principal, mayManage);
}

/** listDeletionOperations: one page of the operations the caller may see, filtered as asked. */
export async function listDeletionOperations(
  {
    deletions,
    workspaces,
    mayManage,
  }: { deletions: DeletionRepository; workspaces: WorkspaceRepository; mayManage: MayManage },
  {
    principal,
    query,
  }: {
    principal: { superAdmin: boolean; roles: Record<string, string> };
    query: { workspace?: string; status?: DeletionStatus; limit: number; cursor?: string };
  },
) {
  const filter = await deletionFilter(principal, query, workspaces);
  return listVisibleDeletions(deletions, filter, query.limit, query.cursor, principal, mayManage);
}
