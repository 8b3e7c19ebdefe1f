/**
 * The import lifecycle's requests (ADR 0083): its ports, the job's transitions, and start, publish,
 * cancel, retry, rollback and preview. Every change is a version-conditioned write of the job with
 * its history event; the work itself runs in the import workflow (`import-steps.ts`). The creation
 * is `import-creation.ts`, a new plan `import-planning.ts`, the quota reservation
 * `import-reservations.ts`.
 */

import { type DeletionRepository, deleteService } from './deletions.ts';
import type { JobFailureReason } from './error-reasons.ts';
import { NotFoundError, StateConflictError, UnavailableError } from './errors.ts';
import { UUID_PATTERN } from './identifiers.ts';
import {
  type ImportEvent,
  type ImportJob,
  type ImportProgress,
  type ImportStatus,
  type ImportUploadTicket,
  type ImportWorkflowInput,
  importExecutionName,
} from './import-model.ts';
import type { ImportQuotas, ImportUsage } from './import-plans.ts';
import {
  admitLoad,
  explainedQuotaRefusal,
  heldBy,
  isQuotaRefusal,
  reservation,
  workspaceQuota,
} from './import-reservations.ts';
import { hasTargets, targetsLayer } from './import-targets.ts';
import { lastWriterWinsOn } from './last-writer-wins.ts';
import type { Page } from './page.ts';
import type { ServiceRepository } from './services.ts';
import { checkVersion, type Workspace } from './workspaces.ts';

export * from './import-model.ts';

/** Port: import jobs and their history. */
export interface ImportRepository {
  /** Stores a new job and its first history event (the workspace must be active). */
  create(job: ImportJob): Promise<void>;
  find(workspaceId: string, id: string): Promise<ImportJob | undefined>;
  /** Newest first; `status` filters. */
  list(
    workspaceId: string,
    status: ImportStatus | undefined,
    limit: number,
    cursor?: string,
  ): Promise<Page<ImportJob>>;
  /** Oldest first. */
  history(workspaceId: string, id: string, limit: number, cursor?: string): Promise<Page<ImportEvent>>;
  /**
   * Replaces `previous` (still at its version) by `next` (version + 1) and appends `next`'s history
   * event when its status, phase or error changed — one transaction. A lost race throws the
   * concurrent-modification StateConflictError. When the job's reservation (`reserved_rows`,
   * `reserved_bytes`) changes, the workspace's import usage changes by as much in the same
   * transaction; growing it needs `quota` (the workspace's maxima) and is refused with a
   * RuleViolationError `workspace_import_quota` when the usage would pass it (ADR 0110).
   */
  save(previous: ImportJob, next: ImportJob, quota?: ImportUsage): Promise<void>;
  /** What the workspace's imports hold of its import quota now (strongly consistent; zeros when none). */
  usage(workspaceId: string): Promise<ImportUsage>;
  /**
   * Records progress of the run that owns the job (no history event): false when the job moved on
   * (another run, another status) — the caller stops.
   */
  progress(job: ImportJob, progress: ImportProgress & { warnings?: string[] }): Promise<boolean>;
  /** The job that published (or publishes) the service, if any. */
  findByService(workspaceId: string, serviceId: string): Promise<ImportJob | undefined>;
  /** The first job of the workspace for which `test` holds (in creation order). */
  firstWhere(workspaceId: string, test: (job: ImportJob) => boolean): Promise<ImportJob | undefined>;
  /** Calls `fn` with every job a workflow owns (queued, running, publishing, cancelling, rolling back). */
  working(fn: (job: ImportJob) => Promise<void>): Promise<void>;
}

/** Port: the upload store (S3 presigned POST on AWS; the local host's form POST locally). */
export interface ImportUploads {
  /** The form POST that uploads exactly `key`, at most `maxBytes`, until `expiresAt`. */
  ticket(key: string, maxBytes: number, expiresAt: Date): Promise<Omit<ImportUploadTicket, 'max_bytes'>>;
  /**
   * Seals the upload of an import that starts (ADR 0106): what the workflow reads from then on is
   * this object, whatever is POSTed to the form later. Undefined when nothing was uploaded.
   */
  seal(key: string): Promise<SealedUpload | undefined>;
  /** Removes the upload (`key` or its sealed `location`) and its sealed copy; idempotent. */
  remove(keyOrLocation: string): Promise<void>;
}

/** An upload as startImport sealed it: its size, where the workflow reads it and its identity. */
export interface SealedUpload {
  size: number;
  location: string;
  etag: string;
}

/** Port: which URIs an import may read (allowed S3 buckets; locally a directory). */
export interface ImportUriPolicy {
  /** The location the workflow reads, or an InvalidInputError naming why not. */
  admit(uri: string): Promise<string>;
}

/** Port: starts the import workflow. */
export interface ImportStarter {
  startImport(name: string, input: ImportWorkflowInput): Promise<void>;
}

/** Limits of the stage (config): the upload, one import's and a workspace's imports' (ADR 0110). */
export interface ImportLimits extends ImportQuotas {
  uploadTtlSeconds: number;
}

/** The starts of a run: the job's current run, named so a repeated start can't run twice. */
export function startRun(starter: ImportStarter, job: ImportJob): Promise<void> {
  return starter.startImport(importExecutionName(job), {
    import_id: job.id,
    workspace_id: job.workspace_id,
    run: job.run,
  });
}

/** Fields of a job a transition sets: a failure's reason only from the list (JobFailureReason). */
export type ImportChange = Omit<Partial<ImportJob>, 'error_reason'> & { error_reason?: JobFailureReason };

/** A copy of `job` moved to `status`/`phase` with the next version, run and timestamps as given. */
export function advance(
  job: ImportJob,
  change: ImportChange & { status: ImportStatus },
  now = new Date(),
): ImportJob {
  const next = { ...job, ...change, version: job.version + 1, updated_at: now.toISOString() } as ImportJob;
  // A status other than `failed` clears the error unless the change sets one; undefined removes a field.
  if (!('error_message' in change) && change.status !== 'failed') {
    delete next.error_message;
    delete next.error_reason;
  }
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) Reflect.deleteProperty(next, key);
  }
  return next;
}

/** Reads a job of the workspace; any other is the same 404. */
export async function requireImport(
  repo: ImportRepository,
  workspaceId: string,
  id: string,
): Promise<ImportJob> {
  const job = UUID_PATTERN.test(id) ? await repo.find(workspaceId, id.toLowerCase()) : undefined;
  if (!job) throw new NotFoundError('import_not_found', `Import '${id}' does not exist in this workspace.`);
  return job;
}

export function refuse(job: ImportJob, action: string, allowed: string): StateConflictError {
  return new StateConflictError(
    'import_state_conflict',
    `The import is '${job.status}'; ${action} is possible only ${allowed}.`,
    { status: job.status },
  );
}

/**
 * Saves one transition, retrying on a fresh read when another request changed the job meanwhile;
 * `quota` lets the transition grow the job's reservation (see ImportRepository.save).
 */
function transition(
  repo: ImportRepository,
  job: ImportJob,
  decide: (current: ImportJob) => ImportJob | undefined,
  quota?: ImportUsage,
): Promise<ImportJob> {
  return lastWriterWinsOn(
    job,
    () => requireImport(repo, job.workspace_id, job.id),
    async (current) => {
      const next = decide(current);
      if (!next) return current;
      await repo.save(current, next, quota);
      return next;
    },
  );
}

/**
 * A transition that may grow the job's reservation (setImportPlan, retryImport): `decide` names
 * what it reserves with `ask(need, held)`, and the store's refusal of it (another import took the
 * room between the read and the write) is explained with the workspace's usage read again.
 */
export async function transitionWithinQuota(
  repo: ImportRepository,
  job: ImportJob,
  limits: ImportQuotas,
  decide: (current: ImportJob, ask: (need: ImportUsage, held: ImportUsage) => void) => ImportJob | undefined,
): Promise<ImportJob> {
  let asked: { need: ImportUsage; held: ImportUsage } | undefined;
  try {
    return await transition(
      repo,
      job,
      (current) => {
        asked = undefined;
        return decide(current, (need, held) => {
          asked = { need, held };
        });
      },
      workspaceQuota(limits),
    );
  } catch (error) {
    if (!isQuotaRefusal(error)) throw error;
    throw await explainedQuotaRefusal(repo, job.workspace_id, asked, limits, error);
  }
}

/**
 * startImport: awaiting_upload → queued once the file is there (409 when nothing was uploaded; a
 * file over the limit fails the job). Any later status: the job as it is (idempotent); a cancelled
 * import can't start (409).
 */
export async function startJob(
  deps: { repo: ImportRepository; uploads: ImportUploads; starter: ImportStarter },
  job: ImportJob,
  now = new Date(),
): Promise<ImportJob> {
  if (job.status === 'cancelled')
    throw refuse(job, 'starting', 'while it awaits its upload (it was cancelled)');
  if (job.status !== 'awaiting_upload') return job;
  const sealed = await deps.uploads.seal(job.source_location);
  if (sealed === undefined) {
    const expired = job.upload_expires_at && Date.parse(job.upload_expires_at) < now.getTime();
    throw new StateConflictError(
      'upload_missing',
      expired
        ? 'Nothing was uploaded and the upload URL has expired; create a new import.'
        : 'Nothing was uploaded yet: POST the file to the upload URL first.',
    );
  }
  const { size } = sealed;
  const next = await transition(deps.repo, job, (current) => {
    if (current.status !== 'awaiting_upload') return undefined;
    if (size > current.max_bytes) {
      return advance(current, {
        status: 'failed',
        phase: 'upload',
        error_message: `The uploaded file is ${size} bytes; imports take at most ${current.max_bytes} bytes. Split the file, or create a new import with a smaller one.`,
        error_reason: 'file_too_large',
      });
    }
    return advance(
      current,
      {
        status: 'queued',
        phase: 'acquire',
        run: current.run + 1,
        started_at: now.toISOString(),
        source_location: sealed.location,
        source_etag: sealed.etag,
      },
      now,
    );
  });
  if (next.status === 'queued') await startRun(deps.starter, next);
  return next;
}

/** publishImport: ready_to_publish → publishing. */
export async function publishJob(
  deps: { repo: ImportRepository; starter: ImportStarter },
  job: ImportJob,
  now = new Date(),
): Promise<ImportJob> {
  const next = await transition(deps.repo, job, (current) => {
    if (current.status === 'publishing' || current.status === 'published') return undefined;
    if (current.status !== 'ready_to_publish') throw refuse(current, 'publishing', "from 'ready_to_publish'");
    return advance(current, { status: 'publishing', phase: 'publish', run: current.run + 1 }, now);
  });
  if (next.status === 'publishing') await startRun(deps.starter, next);
  return next;
}

/**
 * rollbackImport (spec 4.15): published → rolling_back. The service's recursive deletion starts
 * here (so the answer names `rollback_operation_id`); the workflow records it, waits for it and
 * drops the import's schema. A rollback already running answers with the job (and resumes its
 * deletion, should its start have been lost).
 */
export async function rollbackJob(
  deps: {
    repo: ImportRepository;
    starter: ImportStarter;
    services: ServiceRepository;
    deletions: DeletionRepository;
  },
  workspace: Workspace,
  job: ImportJob,
  createdBy: string,
  now = new Date(),
): Promise<ImportJob> {
  if (job.status === 'published') await refuseTargetRollback(deps.repo, job, now);
  // The import's service is read beside the transition, which doesn't change it: one round trip
  // fewer. (A refused transition leaves the read unused.)
  const reading =
    !job.rollback_operation_id && job.service_id
      ? deps.services.findById(job.workspace_id, job.service_id)
      : undefined;
  reading?.catch(() => undefined);
  const next = await transition(deps.repo, job, (current) => {
    if (current.status === 'rolling_back') return undefined;
    if (current.status !== 'published') throw refuse(current, 'a rollback', "from 'published'");
    return advance(
      current,
      { status: 'rolling_back', phase: 'rollback', teardown_to: 'rolled_back', run: current.run + 1 },
      now,
    );
  });
  let operationId = next.rollback_operation_id;
  const service =
    operationId || !next.service_id
      ? undefined
      : reading && next.service_id === job.service_id
        ? await reading
        : await deps.services.findById(next.workspace_id, next.service_id);
  if (service) {
    // The service is hidden and its deletion recorded now (the answer names it); the import
    // workflow's teardown runs it, as its nested execution (one operation per service).
    const outcome = await deleteService(
      { deletions: deps.deletions },
      { workspace, service, recurse: true, createdBy, now },
    );
    if ('operation' in outcome) operationId = outcome.operation.id;
  }
  await startRun(deps.starter, next);
  return operationId ? { ...next, rollback_operation_id: operationId } : next;
}

/**
 * An import that replaced or appended to layers (ADR 0127) rolls back only while its previous data
 * is kept, and only after every later import that changed one of those layers was rolled back:
 * the layer's generations are undone newest first (409 otherwise, naming what is in the way).
 */
async function refuseTargetRollback(repo: ImportRepository, job: ImportJob, now: Date): Promise<void> {
  if (!hasTargets(job)) return;
  if (job.rollback_until && Date.parse(job.rollback_until) < now.getTime()) {
    throw new StateConflictError(
      'import_generation_expired',
      `The data this import replaced was kept until ${job.rollback_until}; it is gone, so the import can't be rolled back. Import the earlier file again with mode 'replace' instead.`,
    );
  }
  const targets = (job.plan?.layers ?? []).flatMap((l) => (l.target ? [l.target.layer] : []));
  const later = await repo.firstWhere(
    job.workspace_id,
    (other) =>
      other.id !== job.id &&
      (other.status === 'publishing' ||
        other.status === 'rolling_back' ||
        (other.status === 'published' && (other.completed_at ?? '') > (job.completed_at ?? ''))) &&
      targets.some((layer) => targetsLayer(other, layer)),
  );
  if (later) {
    throw new StateConflictError(
      'import_rollback_order',
      `Import '${later.name}' (${later.id}, ${later.status}) changed a layer this import replaced or appended to after it; roll that import back first.`,
    );
  }
}

/**
 * cancelImport: nothing staged yet (awaiting_upload) → cancelled at once (the upload removed);
 * work in progress or staged data → cancelling, the workflow drops the staging and ends
 * `cancelled`. Refused once publishing, published or rolling back. Repeated: the job as it is.
 */
export async function cancelJob(
  deps: { repo: ImportRepository; uploads: ImportUploads; starter: ImportStarter },
  job: ImportJob,
  ifMatch?: string,
  now = new Date(),
): Promise<{ job: ImportJob; done: boolean }> {
  const next = await transition(deps.repo, job, (current) => {
    checkVersion(current, ifMatch);
    if (current.status === 'cancelled' || current.status === 'cancelling') return undefined;
    if (['publishing', 'published', 'rolling_back', 'rolled_back'].includes(current.status)) {
      throw refuse(current, 'cancelling', 'before it is published (a published import is rolled back)');
    }
    if (current.status === 'awaiting_upload') {
      return advance(current, { status: 'cancelled', completed_at: now.toISOString() }, now);
    }
    return advance(current, { status: 'cancelling', teardown_to: 'cancelled', run: current.run + 1 }, now);
  });
  if (next.status === 'cancelled' && next.source_kind === 'upload')
    await deps.uploads.remove(next.source_location);
  if (next.status === 'cancelling') await startRun(deps.starter, next);
  return { job: next, done: next.status === 'cancelled' };
}

/**
 * retryImport: failed → where it failed: a rollback resumes, a publish runs again, a load starts
 * over from the file (its staging was dropped when it failed) — reserving its plan's rows and
 * bytes again (422 when over a limit or the workspace's quota). Repeated on a running job: as is.
 */
export async function retryJob(
  deps: { repo: ImportRepository; starter: ImportStarter; limits: ImportQuotas },
  job: ImportJob,
  now = new Date(),
  /** The workspace's usage, when the caller read it beside the job; else read here. */
  read?: ImportUsage,
): Promise<ImportJob> {
  const usage = read ?? (await deps.repo.usage(job.workspace_id));
  const next = await transitionWithinQuota(deps.repo, job, deps.limits, (current, ask) => {
    if (current.status !== 'failed') throw refuse(current, 'a retry', "from 'failed'");
    const common = {
      run: current.run + 1,
      retry_count: current.retry_count + 1,
      error_message: undefined,
      error_reason: undefined,
    };
    if (current.phase === 'rollback') {
      // The deletion is asked again: deleteService resumes the service's failed operation.
      return advance(current, { ...common, status: 'rolling_back', rollback_operation_id: undefined }, now);
    }
    // A failed publish left no service (ADR 0126): unchanged, it publishes again; with a new
    // plan (reload) it loads again, since the tables are named after the public ids.
    if (current.phase === 'publish' && !current.reload)
      return advance(current, { ...common, status: 'publishing' }, now);
    if (current.phase === 'upload')
      throw refuse(
        current,
        'a retry',
        'after a failure past the upload (upload the file again with a new import)',
      );
    const need =
      current.discovery && current.plan
        ? admitLoad(current, current.plan, current.discovery, deps.limits, usage)
        : undefined;
    if (need) ask(need, heldBy(current));
    return advance(
      current,
      {
        ...common,
        status: 'queued',
        phase: current.discovery ? 'transform' : 'acquire',
        reload: true,
        ...(need ? reservation(need) : {}),
      },
      now,
    );
  });
  await startRun(deps.starter, next);
  return next;
}

/** Port: staged (or published) features of an import, for the preview. */
export interface ImportPreviews {
  /** Up to `limit` features of the table as GeoJSON in EPSG:4326; undefined when the table isn't there. */
  preview(
    importId: string,
    table: string,
    limit: number,
  ): Promise<{ type: 'FeatureCollection'; features: unknown[] } | undefined>;
  tableName(publicId: string): string;
}

/** previewImport: features of one plan layer (by public id or source layer; default the first). */
export async function previewJob(
  previews: ImportPreviews,
  job: ImportJob,
  layer: string | undefined,
  limit: number,
) {
  const staged = ['running', 'ready_to_publish', 'publishing', 'published'].includes(job.status);
  const plan = job.plan?.layers ?? [];
  const chosen =
    layer === undefined ? plan[0] : plan.find((l) => l.public_id === layer || l.source_layer === layer);
  if (layer !== undefined && !chosen) {
    throw new NotFoundError('import_layer_not_found', `The import's plan has no layer '${layer}'.`);
  }
  const found =
    staged && chosen
      ? await previews
          .preview(job.id, previews.tableName(chosen.public_id), limit)
          .catch((error: unknown) => {
            // The outage's own text names the import database (address, driver): logged, not answered (ADR 0110).
            if (!(error instanceof UnavailableError)) throw error;
            throw new UnavailableError(
              error.reason,
              'The import database is unavailable right now; retry shortly.',
              undefined,
              { cause: error },
            );
          })
      : undefined;
  if (!found) {
    throw new StateConflictError(
      'nothing_staged',
      `The import is '${job.status}': no features are staged${chosen ? ` for layer '${chosen.public_id}'` : ''}.`,
    );
  }
  return found;
}

/** True when the import may have tables in the import database, or a service it owns. */
function holdsData(job: ImportJob): boolean {
  if (['awaiting_upload', 'cancelled', 'rolled_back'].includes(job.status)) return false;
  // A failed load dropped its staging; a failed publish or rollback still holds its schema.
  return job.status !== 'failed' || job.phase === 'publish' || job.phase === 'rollback';
}

/**
 * The service belongs to a published import: it goes with rollbackImport (which also drops its
 * tables), not with deleteService — which would leave the import's schema behind (409).
 */
export async function refuseImportOwnedService(
  repo: ImportRepository,
  workspaceId: string,
  serviceId: string,
): Promise<void> {
  const owner = await repo.findByService(workspaceId, serviceId);
  if (owner && holdsData(owner)) {
    throw new StateConflictError(
      'service_owned_by_import',
      `The service was published by import '${owner.id}'; roll the import back instead (POST …/imports/${owner.id}/rollback): that also drops its tables.`,
      { import_id: owner.id },
    );
  }
}

/**
 * A workspace is deleted recursively only once its imports hold no data (409): the deletion
 * workflow removes the catalog, not an import's tables in the import database.
 */
export async function refuseWorkspaceWithImports(repo: ImportRepository, workspaceId: string): Promise<void> {
  const live = await repo.firstWhere(workspaceId, holdsData);
  if (live) {
    throw new StateConflictError(
      'workspace_has_imports',
      `Import '${live.id}' is '${live.status}': cancel or roll back the workspace's imports first (their tables live in the import database).`,
      { import_id: live.id },
    );
  }
}

/** The import a request names: its workspace and its id (the `{import}` of the path). */
export interface ImportCommand {
  workspaceId: string;
  import: string;
}

/**
 * The import use cases of the API: each resolves `{import}` (404 `import_not_found`) and takes the
 * job's step above (ADR 0145).
 */
export async function startImport(deps: Parameters<typeof startJob>[0], command: ImportCommand) {
  return startJob(deps, await requireImport(deps.repo, command.workspaceId, command.import));
}

export async function publishImport(deps: Parameters<typeof publishJob>[0], command: ImportCommand) {
  return publishJob(deps, await requireImport(deps.repo, command.workspaceId, command.import));
}

/** getImport: the job (404 when the workspace has no such import). */
export function getImport({ repo }: { repo: ImportRepository }, command: ImportCommand): Promise<ImportJob> {
  return requireImport(repo, command.workspaceId, command.import);
}

/** listImports: one page of the workspace's imports, newest first, optionally of one status. */
export function listImports(
  { repo }: { repo: ImportRepository },
  command: { workspaceId: string; status?: ImportStatus; limit: number; cursor?: string },
): Promise<Page<ImportJob>> {
  return repo.list(command.workspaceId, command.status, command.limit, command.cursor);
}

export async function rollbackImport(
  deps: Parameters<typeof rollbackJob>[0],
  command: ImportCommand & { workspace: Workspace; principalId: string },
) {
  const job = await requireImport(deps.repo, command.workspaceId, command.import);
  return rollbackJob(deps, command.workspace, job, command.principalId);
}

export async function cancelImport(
  deps: Parameters<typeof cancelJob>[0],
  command: ImportCommand & { ifMatch?: string },
) {
  const job = await requireImport(deps.repo, command.workspaceId, command.import);
  return cancelJob(deps, job, command.ifMatch);
}

export async function retryImport(deps: Parameters<typeof retryJob>[0], command: ImportCommand) {
  // The workspace's usage is read beside the job: one round trip, not two in a row.
  const [job, usage] = await Promise.all([
    requireImport(deps.repo, command.workspaceId, command.import),
    deps.repo.usage(command.workspaceId),
  ]);
  return retryJob(deps, job, new Date(), usage);
}

export async function previewImport(
  deps: { repo: ImportRepository; previews: ImportPreviews },
  command: ImportCommand & { layer?: string; limit: number },
) {
  const job = await requireImport(deps.repo, command.workspaceId, command.import);
  return previewJob(deps.previews, job, command.layer, command.limit);
}

/** One page of an import's history (getImportHistory): 404 for a missing import. */
export async function importHistory(
  { repo }: { repo: ImportRepository },
  command: ImportCommand & { limit: number; cursor?: string },
) {
  const job = await requireImport(repo, command.workspaceId, command.import);
  return repo.history(command.workspaceId, job.id, command.limit, command.cursor);
}
