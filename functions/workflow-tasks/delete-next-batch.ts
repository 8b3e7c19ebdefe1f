import { asSystemChange, deletionSteps } from '../../shared/wiring/workflows.ts';
import { batchBudgetMs, type TaskInput, taskFailure } from '../../shared/workflows/deletion-tasks.ts';

/** "Delete the next batch of dependents": pages of deletions until done or out of time. */
async function run(event: TaskInput): Promise<TaskInput & { done: boolean }> {
  try {
    const { done } = await deletionSteps().runBatch(event.operation_id, event.attempt, batchBudgetMs());
    return { operation_id: event.operation_id, attempt: event.attempt, done };
  } catch (error) {
    throw taskFailure(error);
  }
}

export const handler = asSystemChange('deletion', (e) => e.operation_id, run);
