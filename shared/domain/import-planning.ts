/**
 * setImportPlan (ADR 0083, 0126, 0127): a plan given to a discovered import. It is checked — its
 * targets resolved, its names free in the workspace, one import's limits — and, when the import
 * loads now, reserves its rows and bytes of the workspace's quota in the same write (ADR 0110).
 */
import { AlreadyExistsError, InvalidInputError, StateConflictError } from './errors.ts';
import { NAME_PATTERN } from './identifiers.ts';
import type { ImportJob } from './import-model.ts';
import { findClashes, type NameLookups } from './import-names.ts';
import { completePlan, type ImportPlanInput, type ImportQuotas } from './import-plans.ts';
import { admitLoad, heldBy, reservation } from './import-reservations.ts';
import type { ImportPlan } from './import-sources.ts';
import { resolveTargets, type TargetLookups } from './import-targets.ts';
import {
  advance,
  type ImportCommand,
  type ImportRepository,
  type ImportStarter,
  refuse,
  requireImport,
  startRun,
  transitionWithinQuota,
} from './imports.ts';
import { checkVersion } from './workspaces.ts';

/**
 * setImportPlan: from awaiting_plan, ready_to_publish or failed (nothing published). The plan is
 * checked (400), and so are one import's limits (422); a plan that loads now also reserves its
 * rows and bytes of the workspace's quota (422 `workspace_import_quota`), in the same write.
 */
export async function planJob(
  deps: {
    repo: ImportRepository;
    starter: ImportStarter;
    limits: ImportQuotas;
    names?: NameLookups;
    targets?: TargetLookups;
  },
  job: ImportJob,
  input: ImportPlanInput,
  ifMatch?: string,
  now = new Date(),
): Promise<ImportJob> {
  const serviceName = input.service_name ?? job.service_name;
  if (input.service_name !== undefined && !NAME_PATTERN.test(input.service_name)) {
    throw new InvalidInputError(
      'invalid_service_name',
      `service_name '${input.service_name}' is not a valid service name.`,
    );
  }
  // The workspace's usage is read beside the plan's own lookups (one round trip fewer).
  const [usage, { plan, notes }] = await Promise.all([
    deps.repo.usage(job.workspace_id),
    checkedPlan(deps, job, input, serviceName),
  ]);
  const next = await transitionWithinQuota(deps.repo, job, deps.limits, (current, ask) => {
    checkVersion(current, ifMatch);
    if (current.status === 'failed' && (current.service_id || current.phase === 'rollback')) {
      // Its data is still published (a publish not undone, a rollback not done): no dead end (issue 25).
      throw new StateConflictError(
        'import_state_conflict',
        `The import failed in phase '${current.phase}' while its data is still published, so its plan can't change. ${current.phase === 'rollback' ? 'Retry the import to resume the rollback.' : 'Retry the import (it publishes again), or cancel it.'}`,
        { status: current.status },
      );
    }
    if (!['awaiting_plan', 'ready_to_publish', 'failed'].includes(current.status) || current.service_id) {
      throw refuse(
        current,
        'changing the plan',
        "while the import is 'awaiting_plan', 'ready_to_publish' or 'failed' and nothing is published",
      );
    }
    if (!current.discovery) {
      // A plan needs the file's layers: until they are known, a retry (or a new import) is the way on.
      throw new StateConflictError(
        'import_not_discovered',
        current.phase === 'upload'
          ? 'The import failed at its upload, before the file was read, so there is no plan to change; create a new import and upload the file again.'
          : 'The import failed before its file was read to the end, so there is no plan to change yet. Retry the import once what its error names is fixed, or create a new import with a corrected file.',
      );
    }
    if (current.status === 'failed') {
      // Stored for the retry, which reserves (the workspace's usage may differ by then).
      admitLoad(current, plan, current.discovery, deps.limits);
      return advance(current, {
        status: 'failed',
        plan,
        service_name: serviceName,
        clashes: undefined,
        reload: true,
        ...(notes.length ? { warnings: notes } : {}),
      });
    }
    const need = admitLoad(current, plan, current.discovery, deps.limits, usage);
    ask(need, heldBy(current));
    return advance(
      current,
      {
        status: 'queued',
        phase: 'transform',
        plan,
        service_name: serviceName,
        clashes: undefined,
        reload: true,
        run: current.run + 1,
        ...(notes.length ? { warnings: notes } : {}),
        ...reservation(need),
      },
      now,
    );
  });
  if (next.status === 'queued') await startRun(deps.starter, next);
  return next;
}

/**
 * The plan as it will be stored: its targets resolved first (ADR 0127), their fields mapped to the
 * layer's columns, then completed from the discovery; refused when it takes a name in use.
 */
async function checkedPlan(
  deps: { names?: NameLookups; targets?: TargetLookups },
  job: ImportJob,
  input: ImportPlanInput,
  serviceName: string,
): Promise<{ plan: ImportPlan; notes: string[] }> {
  let layers = input.layers;
  let notes: string[] = [];
  if (job.discovery && layers.some((l) => l.target)) {
    if (!deps.targets) throw new Error('setImportPlan needs target lookups for a plan with targets');
    ({ layers, notes } = await resolveTargets(deps.targets, job.workspace_id, layers, job.discovery));
  }
  const plan = job.discovery ? completePlan({ ...input, layers }, job.discovery) : (input as ImportPlan);
  if (deps.names && job.discovery && !job.service_id)
    await refuseTakenNames(deps.names, job, plan, serviceName);
  return { plan, notes };
}

/**
 * A plan whose names the workspace already uses is refused (409, ADR 0126), with a free name
 * proposed for each (`extra.clashes`): the import would otherwise load and then fail to publish.
 */
async function refuseTakenNames(
  names: NameLookups,
  job: ImportJob,
  plan: ImportPlan,
  serviceName: string,
): Promise<void> {
  const clashes = await findClashes(names, job.workspace_id, plan, serviceName);
  const first = clashes[0];
  if (!first) return;
  const list = clashes.map((c) => `${c.kind} '${c.name}' (free: '${c.proposed}')`).join(', ');
  throw new AlreadyExistsError(
    first.kind === 'service_name' ? 'service_name_taken' : 'public_id_taken',
    `The workspace already uses ${list}; PUT the plan with other names.`,
    { clashes },
  );
}

export async function setImportPlan(
  deps: Parameters<typeof planJob>[0],
  command: ImportCommand & { body: ImportPlanInput; ifMatch?: string },
) {
  const job = await requireImport(deps.repo, command.workspaceId, command.import);
  return planJob(deps, job, command.body, command.ifMatch);
}
