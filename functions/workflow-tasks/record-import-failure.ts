import { fail } from '../../shared/domain/import-steps.ts';
import { importStepDeps } from '../../shared/wiring/import-engine.ts';
import { failureMessage, type ImportTaskInput, taskFailure } from '../../shared/workflows/import-tasks.ts';

/** "Record why the import failed": the job becomes `failed` with `error_message` (retryable); staging is dropped. */
export async function handler(
  event: ImportTaskInput & { error?: { Error?: string; Cause?: string } },
): Promise<ImportTaskInput> {
  const input = { import_id: event.import_id, workspace_id: event.workspace_id, run: event.run };
  try {
    await fail(importStepDeps(), input, failureMessage(event.error));
    return input;
  } catch (error) {
    throw taskFailure(error);
  }
}
