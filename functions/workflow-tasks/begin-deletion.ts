import { asWorkflowTask, deletionSteps } from '#wiring/workflows.ts';
import type { TaskInput } from '#workflows/tasks.ts';

/** "Mark the operation running": pending|running → running (a completed one is left alone). */
async function run(event: TaskInput): Promise<TaskInput> {
  await deletionSteps().begin(event.operation_id, event.attempt);
  return { operation_id: event.operation_id, attempt: event.attempt };
}

export const handler = asWorkflowTask('deletion', (e) => e.operation_id, run);
