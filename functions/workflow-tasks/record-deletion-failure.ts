import { asWorkflowTask, deletionSteps } from '#wiring/workflows.ts';
import { failureMessage, type TaskInput } from '#workflows/tasks.ts';

/** "Record why the deletion failed": the operation becomes `failed` with `last_error` (retryable). */
async function run(event: TaskInput & { error?: { Error?: string; Cause?: string } }): Promise<TaskInput> {
  await deletionSteps().recordFailure(event.operation_id, event.attempt, failureMessage(event.error));
  return { operation_id: event.operation_id, attempt: event.attempt };
}

export const handler = asWorkflowTask('deletion', (e) => e.operation_id, run);
