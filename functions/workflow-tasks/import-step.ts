import { publicTaskError, runImportStep, type StepResult } from '#domain/import-steps.ts';
import { importStepDeps } from '#wiring/import-engine.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';
import { type ImportTaskInput, stepBudgetMs, taskFailure } from '#workflows/tasks.ts';

/** "Take the next step of the import": one piece of work, then whether (and when) to come back. */
async function run(event: ImportTaskInput): Promise<ImportTaskInput & StepResult> {
  const input = { import_id: event.import_id, workspace_id: event.workspace_id, run: event.run };
  return { ...input, ...(await runImportStep(importStepDeps(), input, stepBudgetMs())) };
}

// Logged in full by taskFailure; the state machine and the failure recorder get the reason only.
export const handler = asWorkflowTask(
  'import',
  (e) => e.import_id,
  run,
  (error) => publicTaskError(taskFailure(error), error),
);
