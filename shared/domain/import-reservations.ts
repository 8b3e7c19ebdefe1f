/**
 * An import's reservation of its workspace's import quota (ADR 0110): what a job holds, what a
 * load is admitted to reserve, and the store's refusal explained with the usage read again. Used
 * by the requests that start a load (setImportPlan, retryImport) and by the workflow's step.
 */
import { RuleViolationError } from './errors.ts';
import type { ImportJob } from './import-model.ts';
import {
  type ImportQuotas,
  type ImportUsage,
  importLimitRefusal,
  planFootprint,
  validatePlan,
  workspaceQuotaRefusal,
} from './import-plans.ts';
import type { Discovery, ImportPlan } from './import-sources.ts';

/** What a job holds of its workspace's import quota now. */
export function heldBy(job: Pick<ImportJob, 'reserved_rows' | 'reserved_bytes'>): ImportUsage {
  return { rows: job.reserved_rows ?? 0, bytes: job.reserved_bytes ?? 0 };
}

/** The job's reservation fields for `usage` (zero removes them). */
export function reservation(usage: ImportUsage): Pick<ImportJob, 'reserved_rows' | 'reserved_bytes'> {
  return {
    reserved_rows: usage.rows > 0 ? usage.rows : undefined,
    reserved_bytes: usage.bytes > 0 ? usage.bytes : undefined,
  } as Pick<ImportJob, 'reserved_rows' | 'reserved_bytes'>;
}

/** The workspace maxima the store checks a growing reservation against. */
export function workspaceQuota(limits: ImportQuotas): ImportUsage {
  return { rows: limits.workspaceMaxRows, bytes: limits.workspaceMaxBytes };
}

/** True for the store's refusal of a reservation past the workspace's quota. */
export function isQuotaRefusal(error: unknown): error is RuleViolationError {
  return error instanceof RuleViolationError && error.reason === 'workspace_import_quota';
}

/**
 * What loading `plan` reserves, after the checks a load starts with (ADR 0110): the plan itself
 * (400 `invalid_plan`), one import's limits (422), and, with `usage` (what the workspace's imports
 * hold now), the workspace's quota (422 `workspace_import_quota`).
 */
export function admitLoad(
  job: ImportJob,
  plan: ImportPlan,
  discovery: Discovery,
  limits: ImportQuotas,
  usage?: ImportUsage,
): ImportUsage {
  validatePlan(plan, discovery);
  const footprint = planFootprint(plan, discovery);
  const refusal = importLimitRefusal(footprint, limits);
  if (refusal) throw refusal;
  const need = { rows: footprint.rows, bytes: footprint.bytes };
  const over = usage && workspaceQuotaRefusal(usage, heldBy(job), need, limits);
  if (over) throw over;
  return need;
}

/**
 * The store's refusal of a reservation (`refusal`: another import took the room between the read
 * and the write) explained with the workspace's usage read again: how much is left now for what
 * was `asked`. The store's own refusal when nothing was asked or the room is there again.
 */
export async function explainedQuotaRefusal(
  repo: { usage(workspaceId: string): Promise<ImportUsage> },
  workspaceId: string,
  asked: { need: ImportUsage; held: ImportUsage } | undefined,
  limits: ImportQuotas,
  refusal: RuleViolationError,
): Promise<RuleViolationError> {
  if (!asked) return refusal;
  const usage = await repo.usage(workspaceId);
  return workspaceQuotaRefusal(usage, asked.held, asked.need, limits) ?? refusal;
}
