import { taskFailureOf } from '#domain/import-model.ts';
import { fail } from '#domain/import-steps.ts';
import { importStepDeps } from '#wiring/import-engine.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';
import type { ImportTaskInput } from '#workflows/tasks.ts';

/**
 * "Record why the import failed": the job becomes `failed` (retryable; a load's staging dropped)
 * with a reason and a message for the user; the caught error's text is only logged (ADR 0110).
 */
async function run(
  event: ImportTaskInput & { error?: { Error?: string; Cause?: string } },
): Promise<ImportTaskInput> {
  const input = { import_id: event.import_id, workspace_id: event.workspace_id, run: event.run };
  await fail(importStepDeps(), input, taskFailureOf(event.error));
  return input;
}

export const handler = asWorkflowTask('import', (e) => e.import_id, run);
