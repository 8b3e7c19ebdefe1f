import { importStepBudgetMs } from '#config/env.ts';
import type { ImportWorkflowInput } from '#domain/import-model.ts';
import { failureMessage, taskFailure } from './deletion-tasks.ts';

/** What the import tasks receive (and return, with the step's answer). */
export type ImportTaskInput = ImportWorkflowInput;

/** Time one import step may spend loading before handing back to the state machine. */
export function stepBudgetMs(): number {
  return importStepBudgetMs();
}

export { failureMessage, taskFailure };
