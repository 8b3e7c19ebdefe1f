import { deletionSteps } from '../../shared/wiring/workflows.ts';
import { type TaskInput, taskFailure } from '../../shared/workflows/deletion-tasks.ts';

/** "Mark the operation running": pending|running → running (a completed one is left alone). */
export async function handler(event: TaskInput): Promise<TaskInput> {
  try {
    await deletionSteps().begin(event.operation_id, event.attempt);
    return { operation_id: event.operation_id, attempt: event.attempt };
  } catch (error) {
    throw taskFailure(error);
  }
}
