/**
 * The import workflow's one step (ADR 0083): it reads the job and does the next piece of work its
 * status asks for — acquire and discover the file, load it chunk by chunk into staging, publish,
 * tear down (cancel, rollback) — within a time budget, then tells the state machine whether to
 * come back. Every write is fenced by the job's run: a step of an older execution stops.
 */
import type { DataSourceGateway, PostgisConnectionInfo } from './datasource.ts';
import { type DeletionRepository, deleteService, deletionInput, executionName } from './deletions.ts';
import { AlreadyExistsError, DomainError, RuleViolationError, StateConflictError } from './errors.ts';
import { REASON_CODE_PATTERN } from './identifiers.ts';
import {
  type ImportFailure,
  type ImportJob,
  type ImportProgress,
  type ImportWorkflowInput,
  importFailureOf,
  type NameClash,
  publicErrorText,
  REASON_MARK,
  withWayOut,
} from './import-model.ts';
import { clashWarnings, findClashes, withProposals } from './import-names.ts';
import {
  defaultPlan,
  type ImportQuotas,
  type LayerPlanInput,
  layersWithoutCrs,
  planWithNames,
} from './import-plans.ts';
import {
  admitLoad,
  explainedQuotaRefusal,
  heldBy,
  isQuotaRefusal,
  reservation,
  workspaceQuota,
} from './import-reservations.ts';
import { type Discovery, ImportInputError, type ImportPlan, type LayerPlan } from './import-sources.ts';
import {
  findTargetLayer,
  hasTargets,
  outcomeNote,
  type ResolvedTarget,
  resolveTargets,
  type TargetOutcome,
  type TargetTable,
  targetTables,
} from './import-targets.ts';
import { advance, type ImportChange, type ImportRepository } from './imports.ts';
import { isConcurrentModification } from './last-writer-wins.ts';
import { createLayer, type LayerRepository, refreshLayerSource } from './layers.ts';
import type { SecretBox } from './secrets.ts';
import { createService, type ServiceGateway, type ServiceRepository } from './services.ts';
import { silentLog, throttledProgress, type WorkflowLog } from './workflow-log.ts';
import type { DeletionWorkflowInput } from './workflows.ts';
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
  /**
   * Puts the staged rows of the plan layers that target a layer into its table (ADR 0127): a
   * replace swaps the table (the previous one kept in this import's schema), an append adds the
   * rows — in one transaction, recorded, so a repeat reports instead of doing it again. Previous
   * generations recorded before `expireBefore` are dropped first.
   */
  applyTargets(job: ImportJob, targets: TargetTable[], expireBefore: Date): Promise<TargetOutcome[]>;
  /** Undoes the import's replaces and appends (idempotent); an ImportInputError when a later import changed the table. */
  revertTargets(importId: string): Promise<TargetOutcome[]>;
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
  workspaces: WorkspaceRepository;
  /** One import's and the workspace's limits (ADR 0110): checked, and reserved, before a load. */
  limits: ImportQuotas;
  /** The upload store: an upload is removed once its import is published, cancelled or rolled back (ADR 0106). */
  uploads?: { remove(keyOrLocation: string): Promise<void> };
  /** Where the step logs transitions and load progress (ADR 0090). */
  log?: WorkflowLog;
  /** How long a replaced layer's previous data is kept for a rollback (ADR 0127; default 7 days). */
  generationRetentionHours?: number;
}

const DEFAULT_RETENTION_HOURS = 168;

/**
 * What the state machine does next: stop, or come back (after `wait_seconds`) — or first run the
 * service's `deletion` as its nested execution (a rollback's teardown, ADR 0083), coming back when
 * it ends, or after `wait_seconds` when it could not be run.
 */
export interface StepResult {
  done: boolean;
  wait_seconds: number;
  deletion?: { name: string; input: DeletionWorkflowInput };
}

const DONE: StepResult = { done: true, wait_seconds: 0 };
const AGAIN: StepResult = { done: false, wait_seconds: 0 };
/**
 * How long a teardown waits before it looks at its deletion again when the nested execution could
 * not be run (its attempt's execution ended, a sweep runs a newer one): 2 s at first, a tenth of
 * the time waited so far later, at most a minute — so the history stays far below Step Functions'
 * 25,000 events.
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
function logTransition(log: WorkflowLog, job: ImportJob, next: ImportJob, detail?: string): void {
  if (job.status === next.status && job.phase === next.phase) return;
  const fields = { ...importFields(next), previous_status: job.status };
  if (next.status === 'failed') {
    // The user reads error_message; what went wrong underneath (`detail`) is only logged (ADR 0110).
    log.warn('Import failed', {
      ...fields,
      reason: next.error_message,
      error_reason: next.error_reason,
      ...(detail ? { detail } : {}),
    });
  } else log.info(`Import ${next.status}`, fields);
  // The run's outcome (ADR 0092): published, or failed; a cancelled or rolled back import is neither.
  if (next.status === 'published') log.outcome?.('import', 'succeeded');
  else if (next.status === 'failed') log.outcome?.('import', 'failed');
}

/** Saves a transition of the owning run; false when the job moved on meanwhile (the step stops). */
async function save(
  deps: ImportStepDeps,
  job: ImportJob,
  next: ImportJob,
  options: { quota?: ImportQuotas; detail?: string } = {},
): Promise<boolean> {
  try {
    await deps.repo.save(job, next, options.quota && workspaceQuota(options.quota));
    logTransition(deps.log ?? silentLog, job, next, options.detail);
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
      await fail(deps, input, importFailureOf(error), now);
      return DONE;
    }
    throw error;
  }
}

/**
 * The error a failed step hands the state machine (ADR 0110): `thrown`'s name (the Retry and
 * Catch match names) and, as its message, only the failure's reason (`REASON_MARK`) — the
 * failure recorder turns it into the job's error; the text stays in the step's log.
 */
export function publicTaskError(thrown: Error, cause: unknown): Error {
  const carrier = new Error(`${REASON_MARK}${importFailureOf(cause).reason}`);
  carrier.name = thrown.name;
  return carrier;
}

/**
 * The job ends `failed` with `failure` (fenced by the run): its reason and message, internal
 * details taken out (ADR 0110; a plain string is read as an untrusted message), its detail only
 * logged. A failed load leaves nothing behind: its staging is dropped (a retry loads again from
 * the file) and its reservation of the workspace's quota released; a failed publish, rollback or
 * cancel keeps both (its data is still there).
 */
export async function fail(
  deps: ImportStepDeps,
  input: ImportWorkflowInput,
  failure: ImportFailure | string,
  now: () => Date = () => new Date(),
): Promise<void> {
  let job = await owned(deps, input);
  if (!job || ['failed', 'cancelled', 'rolled_back', 'published'].includes(job.status)) return;
  if (job.status === 'publishing') {
    // A publish the step couldn't finish or undo itself (its Lambda timed out, it crashed): what
    // it wrote is taken back here, so the failed import has no service and its plan stays
    // editable (ADR 0126). Best effort: with the store or the database still down, the failure is
    // recorded anyway, and a retry resumes the publish.
    const undone = await undoPublish(deps, job, now).catch((error: unknown) => {
      (deps.log ?? silentLog).warn('A failed publish could not be undone; a retry resumes it', {
        ...importFields(job as ImportJob),
        reason: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    });
    if (undone) job = undone;
  }
  const { reason, message, detail }: ImportFailure =
    typeof failure === 'string' ? { reason: 'import_failed', message: failure, detail: failure } : failure;
  const keepsData = ['publishing', 'rolling_back', 'cancelling'].includes(job.status);
  // Only a load stages tables: before it (acquire, discover) there is nothing to drop, and the
  // failure is recorded even while the import database is down.
  if (!keepsData && job.phase === 'transform') await deps.engine.dropStaging(job.id, job.run);
  const next = advance(
    job,
    {
      status: 'failed',
      error_message: withWayOut(job, publicErrorText(message)),
      error_reason: REASON_CODE_PATTERN.test(reason) ? reason : 'internal_error',
      ...(keepsData ? {} : reservation({ rows: 0, bytes: 0 })),
    },
    now(),
  );
  await save(deps, job, next, detail ? { detail } : {});
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
    const named = job.plan
      ? { plan: job.plan, unmatched: [] }
      : planWithNames(defaultPlan(discovery), job.requested_layers);
    // Targets (ADR 0127): resolved and their columns mapped before a row is loaded; a target
    // that can't take this file stops the import at a plan, with the file's layer as a new one.
    const targeted = await planTargets(deps, job.workspace_id, named.plan, discovery);
    // Names first, clashes early (ADR 0126): every name the import would publish is checked
    // against the workspace before a row is loaded; auto_publish takes the free names itself.
    let plan = targeted.plan;
    let serviceName = job.service_name;
    let clashes = await findClashes(deps, job.workspace_id, plan, serviceName);
    if (clashes.length > 0 && job.auto_publish)
      ({ plan, service_name: serviceName, clashes } = withProposals(plan, serviceName, clashes));
    const missing = layersWithoutCrs(plan, discovery);
    const notes = [...discovery.warnings, ...targeted.notes, ...clashWarnings(clashes)];
    const common = {
      discovery,
      plan,
      service_name: serviceName,
      clashes: clashes.length ? clashes : undefined,
      processed_bytes: bytes,
      total_layers: plan.layers.length,
      ...(notes.length ? { warnings: notes } : {}),
    };
    const blocked = clashes.some((c) => !c.renamed) || targeted.refused;
    if (missing.length > 0 || named.unmatched.length > 0 || blocked) {
      const warnings = [...notes];
      if (missing.length > 0)
        warnings.push(
          `The CRS of ${missing.map((l) => `'${l}'`).join(', ')} is unknown: PUT the plan with source_srid for ${missing.length === 1 ? 'it' : 'them'}.`,
        );
      if (named.unmatched.length > 0)
        warnings.push(
          `The file has no layer ${named.unmatched.map((l) => `'${l}'`).join(', ')} named at creation: PUT the plan with the layers to load.`,
        );
      const next = advance(job, { ...common, status: 'awaiting_plan', phase: 'transform', warnings }, now());
      await save(deps, job, next);
      return DONE;
    }
    return admitted(deps, job, plan, discovery, common, now);
  }
  // transform
  if (!job.plan || !job.discovery) throw new Error('transform without a plan');
  let current = job;
  if (current.reload) {
    // A failed publish may have moved the tables already (named after the old public ids).
    await deps.engine.dropAll(current.id, current.run);
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
  const warnings = [
    ...(fresh.discovery?.warnings ?? []),
    ...clashWarnings((fresh.clashes ?? []).filter((c) => c.renamed)),
    ...result.warnings,
  ];
  const next = fresh.auto_publish
    ? advance(fresh, { ...progress, warnings, status: 'publishing', phase: 'publish' }, now())
    : advance(fresh, { ...progress, warnings, status: 'ready_to_publish', phase: 'transform' }, now());
  if (!(await save(deps, fresh, next))) return DONE;
  return next.status === 'publishing' ? AGAIN : DONE;
}

/**
 * The plan with its targets resolved and their fields mapped (ADR 0127). A target that can't be
 * (gone, not imported, columns that don't fit) is dropped from its layer, which falls back to the
 * default plan's new layer, and `refused` says the import must wait for a plan.
 */
async function planTargets(
  deps: ImportStepDeps,
  workspaceId: string,
  plan: { layers: LayerPlanInput[] },
  discovery: Discovery,
): Promise<{ plan: ImportPlan; notes: string[]; refused: boolean }> {
  if (!plan.layers.some((l) => l.target)) return { plan: plan as ImportPlan, notes: [], refused: false };
  try {
    const resolved = await resolveTargets(deps, workspaceId, plan.layers, discovery);
    return { plan: { layers: resolved.layers as LayerPlan[] }, notes: resolved.notes, refused: false };
  } catch (error) {
    if (!(error instanceof RuleViolationError)) throw error;
    const defaults = defaultPlan(discovery).layers;
    const layers = plan.layers.map((l) => {
      if (!l.target) return l as LayerPlan;
      return defaults.find((d) => d.source_layer === l.source_layer) ?? (l as LayerPlan);
    });
    return {
      plan: { layers },
      notes: [
        `${error.message} PUT the plan with another target, or without one to publish the file's layer as a new layer.`,
      ],
      refused: true,
    };
  }
}

/**
 * discover → transform, once the plan passes the checks a load starts with (ADR 0110): the plan's
 * names, one import's limits and the workspace's quota, whose rows and bytes the job reserves in
 * the same write. A refusal fails the job with discovery and plan kept, so a smaller plan can be
 * PUT and the import retried.
 */
async function admitted(
  deps: ImportStepDeps,
  job: ImportJob,
  plan: ImportPlan,
  discovery: Discovery,
  common: ImportChange,
  now: () => Date,
): Promise<StepResult> {
  const refused = (error: DomainError) =>
    save(
      deps,
      job,
      advance(
        job,
        {
          ...common,
          status: 'failed',
          phase: 'transform',
          error_message: withWayOut(
            { ...job, discovery, phase: 'transform' },
            publicErrorText(error.message),
          ),
          error_reason: error.reason,
        },
        now(),
      ),
    ).then(() => DONE);
  let need: { rows: number; bytes: number };
  try {
    need = admitLoad(job, plan, discovery, deps.limits, await deps.repo.usage(job.workspace_id));
  } catch (error) {
    if (!(error instanceof DomainError) || error.name === 'UnavailableError') throw error;
    return refused(error);
  }
  const next = advance(
    job,
    { ...common, status: 'running', phase: 'transform', ...reservation(need) },
    now(),
  );
  try {
    return (await save(deps, job, next, { quota: deps.limits })) ? AGAIN : DONE;
  } catch (error) {
    if (!isQuotaRefusal(error)) throw error;
    // Another import took the room between the read and the write: say how much is left now.
    return refused(
      await explainedQuotaRefusal(
        deps.repo,
        job.workspace_id,
        { need, held: heldBy(job) },
        deps.limits,
        error,
      ),
    );
  }
}

/**
 * Publishes: the names are checked first (ADR 0126) — a clash takes the free names (auto_publish,
 * which loads again under them) or fails the publish with the clash named, before anything is
 * written. Then the tables move, the service and its layers are created (each idempotent, so a
 * restarted step resumes), then `published`. A publish that throws undoes its catalog writes first
 * (`undoPublish`): a failed publish leaves no service and its plan editable.
 */
async function publish(deps: ImportStepDeps, job: ImportJob, now: () => Date): Promise<StepResult> {
  if (!job.plan) throw new Error('publish without a plan');
  const ownService = await ownedService(deps, job);
  const clashes = await findClashes(deps, job.workspace_id, job.plan, job.service_name, ownService?.id);
  if (clashes.length > 0) {
    // A resumed publish whose names were taken meanwhile: what it created goes first.
    const base = ownService ? await undoPublish(deps, job, now) : job;
    return base ? nameClash(deps, base, clashes, now) : DONE;
  }
  try {
    return await publishCatalog(deps, job as ImportJob & { plan: ImportPlan }, now);
  } catch (error) {
    const undone = await undoPublish(deps, job, now).catch((undoError: unknown) => {
      (deps.log ?? silentLog).warn('A failed publish could not be undone; a retry resumes it', {
        ...importFields(job),
        reason: undoError instanceof Error ? undoError.message : String(undoError),
      });
      return undefined;
    });
    if (undone && error instanceof AlreadyExistsError && undone.plan) {
      // Another import (or a user) took a name between the check and the write.
      const late = await findClashes(deps, undone.workspace_id, undone.plan, undone.service_name);
      if (late.length > 0) return nameClash(deps, undone, late, now);
    }
    throw asInputError(error);
  }
}

/** The service this import created (by id, or by name with the import's own schema), if any. */
async function ownedService(deps: ImportStepDeps, job: ImportJob) {
  if (job.service_id) return deps.services.findById(job.workspace_id, job.service_id);
  const found = await deps.services.findByName(job.workspace_id, job.service_name);
  const schema = `import_${job.id.replaceAll('-', '')}`;
  return found?.type === 'postgis' && found.connection.schemas?.includes(schema) ? found : undefined;
}

/**
 * Names taken at publish: auto_publish takes the proposals and loads again (the tables are named
 * after the public ids); otherwise the publish fails naming the clash and the free name, with its
 * plan editable (PUT …/plan, then retry).
 */
async function nameClash(
  deps: ImportStepDeps,
  job: ImportJob,
  clashes: NameClash[],
  now: () => Date,
): Promise<StepResult> {
  if (!job.plan) throw new Error('publish without a plan');
  if (job.auto_publish) {
    const renamed = withProposals(job.plan, job.service_name, clashes);
    const next = advance(
      job,
      {
        status: 'running',
        phase: 'transform',
        plan: renamed.plan,
        service_name: renamed.service_name,
        clashes: renamed.clashes,
        reload: true,
        warnings: [...(job.warnings ?? []), ...clashWarnings(renamed.clashes)],
      },
      now(),
    );
    return (await save(deps, job, next)) ? AGAIN : DONE;
  }
  const first = clashes[0] as NameClash;
  const next = advance(
    job,
    {
      status: 'failed',
      phase: 'publish',
      clashes,
      error_reason: first.kind === 'service_name' ? 'service_name_taken' : 'public_id_taken',
      error_message: `Nothing was published: ${clashWarnings(clashes).join(' ')} Then retry the import.`,
    },
    now(),
  );
  await save(deps, job, next);
  return DONE;
}

/**
 * Moves the tables, creates the service and its layers (each idempotent), puts the rows of the
 * layers that target a layer into it (ADR 0127), then `published`.
 */
async function publishCatalog(
  deps: ImportStepDeps,
  planned: ImportJob & { plan: ImportPlan },
  now: () => Date,
): Promise<StepResult> {
  let job: ImportJob = planned;
  const fresh = planned.plan.layers.filter((l) => !l.target);
  const targeted = hasTargets(planned) ? await publishTargets(deps, planned, now) : undefined;
  if (fresh.length === 0) {
    await deps.engine.dropStaging(job.id, job.run);
    const done = advance(
      job,
      {
        status: 'published',
        completed_at: now().toISOString(),
        warnings: [...(job.warnings ?? []), ...(targeted?.notes ?? [])],
        ...(targeted?.rollback_until ? { rollback_until: targeted.rollback_until } : {}),
      },
      now(),
    );
    if (await save(deps, job, done)) await releaseUpload(deps, job);
    return DONE;
  }
  await deps.engine.publishTables({ ...planned, plan: { layers: fresh } });
  let service = await deps.services.findByName(job.workspace_id, job.service_name);
  const serving = await deps.engine.servingConnection(job.id);
  const schema = serving.schemas?.[0];
  if (service && (service.type !== 'postgis' || !service.connection.schemas?.includes(schema ?? ''))) {
    throw new AlreadyExistsError(
      'service_name_taken',
      `A service named '${job.service_name}' was created meanwhile.`,
    );
  }
  if (!service) {
    const { password, ...connection } = serving;
    try {
      service = await createService(
        { services: deps.services, gateway: deps.gateway, secrets: deps.box },
        {
          workspaceId: job.workspace_id,
          body: { name: job.service_name, type: 'postgis', connection: { ...connection, password } },
        },
      );
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
  for (const layer of fresh) {
    const marker = await deps.layers.findPublicId(job.workspace_id, layer.public_id);
    if (marker?.service_id === service.id) continue;
    try {
      await createLayer(
        { layers: deps.layers, gateway: deps.gateway, secrets: deps.box },
        {
          service,
          body: {
            source_layer: `${schema}.${deps.engine.tableName(layer.public_id)}`,
            public_id: layer.public_id,
            title: layer.title ?? layer.source_layer,
            enabled: layer.enabled,
            public: layer.public,
            allowed_roles: layer.allowed_roles ?? [],
            ...((layer.target_srid ?? layer.source_srid)
              ? { crs_default: layer.target_srid ?? layer.source_srid }
              : {}),
          },
        },
      );
    } catch (error) {
      if (error instanceof AlreadyExistsError) throw error;
      throw asInputError(error, layer.public_id);
    }
  }
  const done = advance(
    job,
    {
      status: 'published',
      completed_at: now().toISOString(),
      ...(targeted?.notes.length ? { warnings: [...(job.warnings ?? []), ...targeted.notes] } : {}),
      ...(targeted?.rollback_until ? { rollback_until: targeted.rollback_until } : {}),
    },
    now(),
  );
  if (await save(deps, job, done)) await releaseUpload(deps, job);
  return DONE;
}

/**
 * The targets of the plan resolved again (the layer must still be there, published by its import,
 * with the same columns) and their rows put in; then each target layer's source facts (extent,
 * geometry type) are read again, which moves its version. Returns the history's notes and, after a
 * replace, until when its previous data is kept.
 */
async function publishTargets(
  deps: ImportStepDeps,
  planned: ImportJob & { plan: ImportPlan },
  now: () => Date,
): Promise<{ notes: string[]; rollback_until?: string }> {
  let targets: Map<number, ResolvedTarget>;
  try {
    ({ targets } = await resolveTargets(
      deps,
      planned.workspace_id,
      planned.plan.layers,
      planned.discovery as Discovery,
    ));
  } catch (error) {
    if (!(error instanceof RuleViolationError)) throw error;
    throw new ImportInputError(error.reason, `${error.message} Change the plan (PUT …/plan) and retry.`);
  }
  const hours = deps.generationRetentionHours ?? DEFAULT_RETENTION_HOURS;
  const at = now();
  const outcomes = await deps.engine.applyTargets(
    planned,
    targetTables(planned.plan, targets),
    new Date(at.getTime() - hours * 3_600_000),
  );
  const notes: string[] = [];
  for (const [, target] of targets) {
    const outcome = outcomes.find((o) => o.relation === target.relation);
    if (outcome) notes.push(outcomeNote(outcome, target.layer.public_id));
    await refreshTarget(deps, target);
  }
  const replaced = outcomes.some((o) => o.mode === 'replace');
  return {
    notes,
    ...(replaced ? { rollback_until: new Date(at.getTime() + hours * 3_600_000).toISOString() } : {}),
  };
}

/** A target layer's extent and geometry type read again (best effort: the data is in either way). */
async function refreshTarget(deps: ImportStepDeps, target: ResolvedTarget): Promise<void> {
  try {
    const service = await deps.services.findById(target.layer.workspace_id, target.layer.service_id);
    if (service) await refreshLayerSource(deps.layers, deps.gateway, deps.box, service, target.layer);
  } catch (error) {
    if (!(error instanceof DomainError) || error.name === 'UnavailableError') throw error;
    (deps.log ?? silentLog).warn("A target layer's extent was not refreshed", {
      layer_id: target.layer.id,
      reason: error.message,
    });
  }
}

/**
 * Undoes the import's replaces and appends (ADR 0127), then refreshes the layers' source facts;
 * returns the history's notes.
 */
async function revertTargets(deps: ImportStepDeps, job: ImportJob): Promise<string[]> {
  if (!hasTargets(job)) return [];
  const undone = await deps.engine.revertTargets(job.id);
  const notes: string[] = [];
  for (const layerPlan of job.plan?.layers ?? []) {
    if (!layerPlan.target) continue;
    const found = await findTargetLayer(deps, job.workspace_id, layerPlan.target.layer);
    const outcome = found && undone.find((o) => o.relation === found.source_layer);
    if (!found || !outcome) continue;
    notes.push(outcomeNote(outcome, found.public_id, true));
    await refreshTarget(deps, { layer: found, relation: found.source_layer, columns: new Map() });
  }
  return notes;
}

/**
 * Takes back what a failed publish wrote to the catalog (ADR 0126): the layers of the import's
 * service, then the service (empty by then, so it goes at once), then the job's `service_id`.
 * Idempotent, and fenced by the run; a crash midway leaves the job `publishing`, which a restart
 * resumes forwards. The tables stay (a retry publishes them again; a new plan loads again).
 * Returns the job as saved, or undefined when another run owns it.
 */
export async function undoPublish(
  deps: ImportStepDeps,
  job: ImportJob,
  now: () => Date = () => new Date(),
): Promise<ImportJob | undefined> {
  const current = await owned(deps, { import_id: job.id, workspace_id: job.workspace_id, run: job.run });
  if (current?.status !== 'publishing') return undefined;
  await revertTargets(deps, current);
  const service = await ownedService(deps, current);
  if (service) {
    for (;;) {
      const page = await deps.layers.list(current.workspace_id, service.id, 100);
      for (const layer of page.items) await deps.layers.delete(layer);
      if (page.items.length === 0 || !page.nextCursor) break;
    }
    const workspace = await deps.workspaces.findById(current.workspace_id);
    if (!workspace) throw new StateConflictError('workspace_not_found', 'The workspace is gone.');
    const outcome = await deleteService(
      { deletions: deps.deletions },
      { workspace, service, recurse: false, createdBy: `import:${current.id}` },
    );
    if (!('deleted' in outcome)) throw new Error('the service was not deleted');
  }
  if (!current.service_id) return current;
  const next = advance(current, { status: 'publishing', service_id: undefined }, now());
  return (await save(deps, current, next)) ? next : undefined;
}

/**
 * The uploaded file once nothing reads it again (published, cancelled, rolled back): removed, best
 * effort — what this misses, the upload store's expiry removes (ADR 0106).
 */
async function releaseUpload(deps: ImportStepDeps, job: ImportJob): Promise<void> {
  if (job.source_kind !== 'upload' || !deps.uploads) return;
  try {
    await deps.uploads.remove(job.source_location);
  } catch (error) {
    (deps.log ?? silentLog).warn('Upload not removed; the upload store expires it', {
      ...importFields(job),
      reason: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * A domain refusal while publishing as a failure a user can act on: a name or public id taken
 * keeps its message (it names what to change); any other refusal (the published table unreadable
 * by the service's login, its connection refused) says what failed, and its message — which may
 * name the import database, its schemas or a driver's words — stays in the log (ADR 0110).
 */
function asInputError(error: unknown, publicId?: string): unknown {
  if (!(error instanceof DomainError) || error.name === 'UnavailableError') return error;
  let failure: ImportInputError;
  if (error instanceof AlreadyExistsError) {
    failure = new ImportInputError(
      error.reason,
      `${error.message} Change ${publicId ? `public_id '${publicId}' in the plan` : 'the plan'} (PUT …/plan) and retry.`,
    );
  } else {
    const what = publicId ? `Layer '${publicId}' could not be published` : 'The service could not be created';
    failure = new ImportInputError(
      error.reason,
      `${what} (${error.reason}); the details are in the service's logs. Retry the import.`,
    );
  }
  failure.cause = error;
  return failure;
}

/**
 * Rollback, or a cancel: the service (if one was created) goes through the deletion workflow,
 * then the import's schemas are dropped; the job ends `rolled_back` / `cancelled`.
 */
async function teardown(deps: ImportStepDeps, job: ImportJob, now: () => Date): Promise<StepResult> {
  const service = job.service_id ? await deps.services.findById(job.workspace_id, job.service_id) : undefined;
  if (service) {
    const found = job.rollback_operation_id
      ? await deps.deletions.find(job.rollback_operation_id)
      : undefined;
    if (found?.operation.status === 'failed') {
      // The deletion's own error may be internal (ADR 0110): it is logged, not shown.
      const failure = new ImportInputError(
        'rollback_failed',
        `Deleting the service failed (deletion operation ${job.rollback_operation_id}). Retry the import to resume the rollback.`,
      );
      failure.cause = found.operation.last_error;
      throw failure;
    }
    if (found?.operation.status !== 'completed') {
      // The rollback's request recorded the deletion (and a retry resumes it): asked again, it
      // answers with that operation, which the state machine then runs as its nested execution.
      const workspace = await deps.workspaces.findById(job.workspace_id);
      if (!workspace) throw new StateConflictError('workspace_not_found', 'The workspace is gone.');
      const outcome = await deleteService(
        { deletions: deps.deletions },
        { workspace, service, recurse: true, createdBy: `import:${job.id}`, now: now() },
      );
      if ('operation' in outcome) {
        const { operation } = outcome;
        if (operation.id !== job.rollback_operation_id) {
          const next = advance(job, { status: job.status, rollback_operation_id: operation.id }, now());
          if (!(await save(deps, job, next))) return DONE;
        }
        return {
          done: false,
          wait_seconds: pollSeconds(job, now()),
          deletion: { name: executionName(operation), input: deletionInput(operation) },
        };
      }
    }
  }
  const undone = await revertTargets(deps, job);
  await deps.engine.dropAll(job.id, job.run);
  const end = job.teardown_to ?? (job.status === 'rolling_back' ? 'rolled_back' : 'cancelled');
  // Its tables are gone: the import's reservation of the workspace's quota goes with them.
  const ended = await save(
    deps,
    job,
    advance(
      job,
      {
        status: end,
        completed_at: now().toISOString(),
        ...reservation({ rows: 0, bytes: 0 }),
        ...(undone.length ? { warnings: undone } : {}),
      },
      now(),
    ),
  );
  if (ended) await releaseUpload(deps, job);
  return DONE;
}
