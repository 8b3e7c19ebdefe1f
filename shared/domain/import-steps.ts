/**
 * The import workflow's one step (ADR 0083): it reads the job and does the next piece of work its
 * status asks for — acquire and discover the file, load it chunk by chunk into staging, publish,
 * tear down (cancel, rollback) — within a time budget, then tells the state machine whether to
 * come back. Every write is fenced by the job's run: a step of an older execution stops.
 */
import type { DataSourceGateway, PostgisConnectionInfo } from './datasource.ts';
import type { DeletionRepository } from './deletions.ts';
import { deleteService } from './deletions.ts';
import { AlreadyExistsError, DomainError, StateConflictError } from './errors.ts';
import type { ImportJob, ImportProgress, ImportWorkflowInput } from './import-model.ts';
import { defaultPlan, layersWithoutCrs } from './import-plans.ts';
import { type Discovery, ImportInputError, type ImportPlan } from './import-sources.ts';
import { advance, type ImportRepository } from './imports.ts';
import { isConcurrentModification } from './last-writer-wins.ts';
import { createLayer, type LayerRepository } from './layers.ts';
import type { SecretBox } from './secrets.ts';
import { createService, type ServiceGateway, type ServiceRepository } from './services.ts';
import { silentLog, throttledProgress, type WorkflowLog } from './workflow-log.ts';
import type { WorkflowStarter } from './workflows.ts';
import type { WorkspaceRepository } from './workspaces.ts';

/** What a load run reports. */
export interface LoadResult extends Omit<ImportProgress, 'total_layers'> {
  done: boolean;
  warnings: string[];
}

/** Port: the file and the import database (formats, staging, publish, cleanup). */
export interface ImportEngine {
  /** Makes the source readable and reads it once: layers, fields, CRS, counts (ImportInputError for a bad file). */
  discover(job: ImportJob, onBytes: (bytes: number) => void): Promise<Discovery>;
  /** Loads the plan's layers into staging from their checkpoints until done, out of budget or told to stop. */
  load(
    job: ImportJob & { plan: ImportPlan; discovery: Discovery },
    budgetMs: number,
    shouldStop: () => Promise<boolean>,
    onProgress: (p: Omit<LoadResult, 'done'>) => Promise<void>,
  ): Promise<LoadResult>;
  /** Moves the staged tables into the import's own schema and lets the serving login read them (idempotent). */
  publishTables(job: ImportJob & { plan: ImportPlan }): Promise<void>;
  /** Drops the staging schema; loaders of runs older than `run` are fenced off first (no re-creation). */
  dropStaging(importId: string, run: number): Promise<void>;
  /** Drops staging and the published schema (idempotent). */
  dropAll(importId: string, run: number): Promise<void>;
  /** The table of a plan layer in the import's schema. */
  tableName(publicId: string): string;
  /** How the published service connects: the serving login and the import's schema. */
  servingConnection(importId: string): Promise<PostgisConnectionInfo & { password: string }>;
}

/** Everything the step works with. */
export interface ImportStepDeps {
  repo: ImportRepository;
  engine: ImportEngine;
  services: ServiceRepository;
  layers: LayerRepository;
  gateway: ServiceGateway & DataSourceGateway;
  box: SecretBox;
  deletions: DeletionRepository;
  deletionStarter: WorkflowStarter;
  workspaces: WorkspaceRepository;
  /** Where the step logs transitions and load progress (ADR 0090). */
  log?: WorkflowLog;
}

/** What the state machine does next: stop, or come back (after `wait_seconds`). */
export interface StepResult {
  done: boolean;
  wait_seconds: number;
}

const DONE: StepResult = { done: true, wait_seconds: 0 };
const AGAIN: StepResult = { done: false, wait_seconds: 0 };
/**
 * How long a teardown waits between looks at its deletion operation: 2 s at first, a tenth of the
 * time waited so far later, at most a minute — so a deletion that runs for days stays far below
 * Step Functions' 25,000 history events (~5 per look).
 */
function pollSeconds(job: ImportJob, now: Date): number {
  const waited = (now.getTime() - Date.parse(job.updated_at)) / 1000;
  return Math.min(60, Math.max(2, Math.round(waited / 10)));
}

/** The job as the run `input.run` owns it; undefined when another run owns it (stop). */
async function owned(deps: ImportStepDeps, input: ImportWorkflowInput): Promise<ImportJob | undefined> {
  const job = await deps.repo.find(input.workspace_id, input.import_id);
  return job && job.run === input.run ? job : undefined;
}

/** The import's identity and figures in a log line (no URI, no credentials). */
function importFields(job: ImportJob): Record<string, unknown> {
  return {
    import_id: job.id,
    workspace_id: job.workspace_id,
    run: job.run,
    status: job.status,
    phase: job.phase,
    processed_bytes: job.processed_bytes,
    processed_features: job.processed_features,
    processed_layers: job.processed_layers,
    total_layers: job.total_layers,
  };
}

/**
 * A change of status or phase: the start, each step of the lifecycle, the end (failed at WARN with
 * why, and the run's outcome).
 */
function logTransition(log: WorkflowLog, job: ImportJob, next: ImportJob): void {
  if (job.status === next.status && job.phase === next.phase) return;
  const fields = { ...importFields(next), previous_status: job.status };
  if (next.status === 'failed') log.warn('Import failed', { ...fields, reason: next.error_message });
  else log.info(`Import ${next.status}`, fields);
  // The run's outcome (ADR 0092): published, or failed; a cancelled or rolled back import is neither.
  if (next.status === 'published') log.outcome?.('import', 'succeeded');
  else if (next.status === 'failed') log.outcome?.('import', 'failed');
}

/** Saves a transition of the owning run; false when the job moved on meanwhile (the step stops). */
async function save(deps: ImportStepDeps, job: ImportJob, next: ImportJob): Promise<boolean> {
  try {
    await deps.repo.save(job, next);
    logTransition(deps.log ?? silentLog, job, next);
    return true;
  } catch (error) {
    if (isConcurrentModification(error)) return false;
    throw error;
  }
}

/** Runs one step of the import for `input.run` within `budgetMs`. */
export async function runImportStep(
  deps: ImportStepDeps,
  input: ImportWorkflowInput,
  budgetMs: number,
  now: () => Date = () => new Date(),
): Promise<StepResult> {
  const job = await owned(deps, input);
  if (!job) return DONE;
  try {
    switch (job.status) {
      case 'queued':
        return (await save(deps, job, advance(job, { status: 'running' }, now()))) ? AGAIN : DONE;
      case 'running':
        return await work(deps, job, budgetMs, now);
      case 'publishing':
        return await publish(deps, job, now);
      case 'cancelling':
      case 'rolling_back':
        return await teardown(deps, job, now);
      default:
        return DONE;
    }
  } catch (error) {
    if (error instanceof ImportInputError) {
      await fail(deps, input, `${error.message}`, now);
      return DONE;
    }
    throw error;
  }
}

/**
 * The job ends `failed` with `message` (fenced by the run). A failed load leaves nothing behind:
 * its staging is dropped (a retry loads again from the file).
 */
export async function fail(
  deps: ImportStepDeps,
  input: ImportWorkflowInput,
  message: string,
  now: () => Date = () => new Date(),
): Promise<void> {
  const job = await owned(deps, input);
  if (!job || ['failed', 'cancelled', 'rolled_back', 'published'].includes(job.status)) return;
  if (!['publishing', 'rolling_back', 'cancelling'].includes(job.status))
    await deps.engine.dropStaging(job.id, job.run);
  await save(deps, job, advance(job, { status: 'failed', error_message: message.slice(0, 2000) }, now()));
}

/** acquire → discover → transform, then awaiting_plan / ready_to_publish / publishing. */
async function work(
  deps: ImportStepDeps,
  job: ImportJob,
  budgetMs: number,
  now: () => Date,
): Promise<StepResult> {
  if (job.phase === 'acquire' || job.phase === 'upload') {
    return (await save(deps, job, advance(job, { status: 'running', phase: 'discover' }, now())))
      ? AGAIN
      : DONE;
  }
  if (job.phase === 'discover') {
    let bytes = 0;
    // Discovery reads the whole file once: its bytes show as progress (every 2 s), never frozen.
    let reported = Date.now();
    let pending: Promise<unknown> = Promise.resolve();
    const discovery = await deps.engine.discover(job, (b) => {
      bytes = b;
      if (Date.now() - reported < 2000) return;
      reported = Date.now();
      pending = pending.then(() =>
        deps.repo
          .progress(job, {
            processed_bytes: bytes,
            processed_features: 0,
            processed_layers: 0,
            total_layers: 0,
          })
          .catch(() => false),
      );
    });
    await pending;
    const plan = job.plan ?? defaultPlan(discovery);
    const missing = layersWithoutCrs(plan, discovery);
    const common = {
      discovery,
      plan,
      processed_bytes: bytes,
      total_layers: plan.layers.length,
      ...(discovery.warnings.length ? { warnings: discovery.warnings } : {}),
    };
    if (missing.length > 0) {
      const warning = `The CRS of ${missing.map((l) => `'${l}'`).join(', ')} is unknown: PUT the plan with source_srid for ${missing.length === 1 ? 'it' : 'them'}.`;
      const next = advance(
        job,
        {
          ...common,
          status: 'awaiting_plan',
          phase: 'transform',
          warnings: [...discovery.warnings, warning],
        },
        now(),
      );
      await save(deps, job, next);
      return DONE;
    }
    return (await save(deps, job, advance(job, { ...common, status: 'running', phase: 'transform' }, now())))
      ? AGAIN
      : DONE;
  }
  // transform
  if (!job.plan || !job.discovery) throw new Error('transform without a plan');
  let current = job;
  if (current.reload) {
    await deps.engine.dropStaging(current.id, current.run);
    const next = advance(
      current,
      { status: 'running', reload: undefined, processed_features: 0, processed_layers: 0 },
      now(),
    );
    if (!(await save(deps, current, next))) return DONE;
    current = next;
  }
  const planned = current as ImportJob & { plan: ImportPlan; discovery: Discovery };
  let stopped = false;
  const report = throttledProgress(deps.log ?? silentLog, 'Import progress');
  const result = await deps.engine.load(
    planned,
    budgetMs,
    async () => stopped,
    async (p) => {
      report(() => ({ ...importFields(planned), ...p, warnings: p.warnings.length }));
      const ok = await deps.repo.progress(planned, {
        processed_bytes: p.processed_bytes,
        processed_features: p.processed_features,
        processed_layers: p.processed_layers,
        total_layers: planned.plan.layers.length,
      });
      if (!ok) stopped = true;
    },
  );
  if (stopped) return DONE;
  const fresh = await deps.repo.find(current.workspace_id, current.id);
  if (!fresh || fresh.run !== current.run || fresh.status !== 'running') return DONE;
  const progress = {
    processed_bytes: Math.max(result.processed_bytes, fresh.processed_bytes),
    processed_features: result.processed_features,
    processed_layers: result.processed_layers,
  };
  if (!result.done) {
    await deps.repo.progress(fresh, { ...progress, total_layers: fresh.total_layers });
    return AGAIN;
  }
  const warnings = [...(fresh.discovery?.warnings ?? []), ...result.warnings];
  const next = fresh.auto_publish
    ? advance(fresh, { ...progress, warnings, status: 'publishing', phase: 'publish' }, now())
    : advance(fresh, { ...progress, warnings, status: 'ready_to_publish', phase: 'transform' }, now());
  if (!(await save(deps, fresh, next))) return DONE;
  return next.status === 'publishing' ? AGAIN : DONE;
}

/** Moves the tables, creates the service and its layers (each idempotent), then `published`. */
async function publish(deps: ImportStepDeps, job: ImportJob, now: () => Date): Promise<StepResult> {
  if (!job.plan) throw new Error('publish without a plan');
  const planned = job as ImportJob & { plan: ImportPlan };
  await deps.engine.publishTables(planned);
  let service = await deps.services.findByName(job.workspace_id, job.service_name);
  const serving = await deps.engine.servingConnection(job.id);
  const schema = serving.schemas?.[0];
  if (service && (service.type !== 'postgis' || !service.connection.schemas?.includes(schema ?? ''))) {
    throw new ImportInputError(
      'service_name_taken',
      `A service named '${job.service_name}' was created meanwhile; cancel this import and import again with another service_name.`,
    );
  }
  if (!service) {
    const { password, ...connection } = serving;
    try {
      service = await createService(deps.services, deps.gateway, deps.box, job.workspace_id, {
        name: job.service_name,
        type: 'postgis',
        connection: { ...connection, password },
      });
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw asInputError(error);
      service = await deps.services.findByName(job.workspace_id, job.service_name);
      if (!service) throw error;
    }
  }
  if (!job.service_id) {
    const next = advance(job, { status: 'publishing', service_id: service.id }, now());
    if (!(await save(deps, job, next))) return DONE;
    job = next;
  }
  for (const layer of planned.plan.layers) {
    const marker = await deps.layers.findPublicId(job.workspace_id, layer.public_id);
    if (marker?.service_id === service.id) continue;
    try {
      await createLayer(deps.layers, deps.gateway, deps.box, service, {
        source_layer: `${schema}.${deps.engine.tableName(layer.public_id)}`,
        public_id: layer.public_id,
        title: layer.title ?? layer.source_layer,
        enabled: layer.enabled,
        public: layer.public,
        allowed_roles: layer.allowed_roles ?? [],
        ...((layer.target_srid ?? layer.source_srid)
          ? { crs_default: layer.target_srid ?? layer.source_srid }
          : {}),
      });
    } catch (error) {
      throw asInputError(error, layer.public_id);
    }
  }
  await save(deps, job, advance(job, { status: 'published', completed_at: now().toISOString() }, now()));
  return DONE;
}

/** A domain refusal while publishing (name or public id taken, source unreadable) as a failure a user can act on. */
function asInputError(error: unknown, publicId?: string): unknown {
  if (!(error instanceof DomainError) || error.name === 'UnavailableError') return error;
  const hint =
    error instanceof AlreadyExistsError && publicId
      ? ` Change public_id '${publicId}' in the plan (PUT …/plan) and retry.`
      : '';
  return new ImportInputError(error.reason, `${error.message}${hint}`);
}

/**
 * Rollback, or a cancel: the service (if one was created) goes through the deletion workflow,
 * then the import's schemas are dropped; the job ends `rolled_back` / `cancelled`.
 */
async function teardown(deps: ImportStepDeps, job: ImportJob, now: () => Date): Promise<StepResult> {
  const service = job.service_id ? await deps.services.findById(job.workspace_id, job.service_id) : undefined;
  if (service && !job.rollback_operation_id) {
    const workspace = await deps.workspaces.findById(job.workspace_id);
    if (!workspace) throw new StateConflictError('workspace_not_found', 'The workspace is gone.');
    const outcome = await deleteService(
      deps.deletions,
      deps.deletionStarter,
      workspace,
      service,
      true,
      `import:${job.id}`,
    );
    if ('operation' in outcome) {
      const next = advance(job, { status: job.status, rollback_operation_id: outcome.operation.id }, now());
      return (await save(deps, job, next)) ? { done: false, wait_seconds: 2 } : DONE;
    }
  } else if (service && job.rollback_operation_id) {
    const found = await deps.deletions.find(job.rollback_operation_id);
    const status = found?.operation.status;
    if (status === 'failed') {
      throw new ImportInputError(
        'rollback_failed',
        `Deleting the service failed: ${found?.operation.last_error ?? 'unknown error'}. Retry the import to resume the rollback.`,
      );
    }
    if (status !== 'completed' && found) return { done: false, wait_seconds: pollSeconds(job, now()) };
  }
  await deps.engine.dropAll(job.id, job.run);
  const end = job.teardown_to ?? (job.status === 'rolling_back' ? 'rolled_back' : 'cancelled');
  await save(deps, job, advance(job, { status: end, completed_at: now().toISOString() }, now()));
  return DONE;
}
