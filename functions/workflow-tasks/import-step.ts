import { runImportStep, type StepResult } from '../../shared/domain/import-steps.ts';
import { importStepDeps } from '../../shared/wiring/import-engine.ts';
import { type ImportTaskInput, stepBudgetMs, taskFailure } from '../../shared/workflows/import-tasks.ts';

/** "Take the next step of the import": one piece of work, then whether (and when) to come back. */
export async function handler(event: ImportTaskInput): Promise<ImportTaskInput & StepResult> {
  const input = { import_id: event.import_id, workspace_id: event.workspace_id, run: event.run };
  try {
    return { ...input, ...(await runImportStep(importStepDeps(), input, stepBudgetMs())) };
  } catch (error) {
    throw taskFailure(error);
  }
}
