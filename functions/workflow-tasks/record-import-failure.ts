import { fail } from '../../shared/domain/import-steps.ts';
import { importStepDeps } from '../../shared/wiring/import-engine.ts';
import { asSystemChange } from '../../shared/wiring/workflows.ts';
import { failureMessage, type ImportTaskInput, taskFailure } from '../../shared/workflows/import-tasks.ts';

/** "Record why the import failed": the job becomes `failed` with `error_message` (retryable); staging is dropped. */
async function run(
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

export const handler = asSystemChange('import', (e) => e.import_id, run);
