import { asSystemChange, deletionSteps } from '../../shared/wiring/workflows.ts';
import { failureMessage, type TaskInput, taskFailure } from '../../shared/workflows/deletion-tasks.ts';

/** "Record why the deletion failed": the operation becomes `failed` with `last_error` (retryable). */
async function run(event: TaskInput & { error?: { Error?: string; Cause?: string } }): Promise<TaskInput> {
  try {
    await deletionSteps().recordFailure(event.operation_id, event.attempt, failureMessage(event.error));
    return { operation_id: event.operation_id, attempt: event.attempt };
  } catch (error) {
    throw taskFailure(error);
  }
}

export const handler = asSystemChange('deletion', (e) => e.operation_id, run);
