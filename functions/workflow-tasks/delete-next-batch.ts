import { asWorkflowTask, deletionSteps } from '#wiring/workflows.ts';
import { batchBudgetMs, type TaskInput } from '#workflows/tasks.ts';

/** "Delete the next batch of dependents": pages of deletions until done or out of time. */
async function run(event: TaskInput): Promise<TaskInput & { done: boolean }> {
  const { done } = await deletionSteps().runBatch(event.operation_id, event.attempt, batchBudgetMs());
  return { operation_id: event.operation_id, attempt: event.attempt, done };
}

export const handler = asWorkflowTask('deletion', (e) => e.operation_id, run);
