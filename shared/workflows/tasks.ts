import { deletionBatchBudgetMs, importStepBudgetMs } from '#config/env.ts';
import type { ImportWorkflowInput } from '#domain/import-model.ts';
import { TransientError } from '#domain/workflows.ts';
import { errorFields, logger } from '#log/logger.ts';

/*
 * The workflow tasks' edge (ADR 0079): what each workflow's tasks receive, their time budgets, and
 * how a task's failure reaches the state machine — for the deletion, import, harvest and tile-cache
 * tasks alike.
 */

/** What every deletion task receives and returns. */
export interface TaskInput {
  operation_id: string;
  attempt: number;
}

/** What the import tasks receive (and return, with the step's answer). */
export type ImportTaskInput = ImportWorkflowInput;

/** Time one deletion batch invocation may spend before handing back to the state machine. */
export function batchBudgetMs(): number {
  return deletionBatchBudgetMs();
}

/** Time one import step may spend loading before handing back to the state machine. */
export function stepBudgetMs(): number {
  return importStepBudgetMs();
}

/**
 * The error a task throws: store outages become `TransientError` (retried with backoff by the
 * state machine); everything else keeps its name and ends the operation `failed`.
 */
export function taskFailure(error: unknown): Error {
  const e = error as Error;
  if (e?.name === 'UnavailableError') {
    logger.warn('workflow task will be retried: a dependency is unavailable', errorFields(e));
    return new TransientError(e.message);
  }
  logger.error('workflow task failed', errorFields(e));
  return e instanceof Error ? e : new Error(String(error));
}

/** A readable `last_error` from the caught `{Error, Cause}` (Lambda puts a JSON document in Cause). */
export function failureMessage(error: { Error?: string; Cause?: string } | undefined): string {
  if (!error) return 'The deletion failed.';
  let cause = error.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string };
    if (parsed.errorMessage) cause = parsed.errorMessage;
  } catch {
    // Not JSON: the message itself.
  }
  return `${error.Error ?? 'Error'}: ${cause}`.trim();
}
