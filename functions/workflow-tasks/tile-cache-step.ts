import { tileCacheStepBudgetMs } from '../../shared/config/env.ts';
import { runTileCacheStep, type TileCacheWorkflowInput } from '../../shared/domain/tile-cache-jobs.ts';
import { tileCacheStepDeps } from '../../shared/wiring/data-plane.ts';
import { asSystemChange } from '../../shared/wiring/workflows.ts';
import { taskFailure } from '../../shared/workflows/deletion-tasks.ts';

/** "Run the next chunks of tiles": chunks until the job is finished or the budget is spent. */
async function run(event: TileCacheWorkflowInput): Promise<TileCacheWorkflowInput & { done: boolean }> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id };
  try {
    const { done } = await runTileCacheStep(tileCacheStepDeps(), input, tileCacheStepBudgetMs());
    return { ...input, done };
  } catch (error) {
    throw taskFailure(error);
  }
}

export const handler = asSystemChange('tile-cache', (e) => e.job_id, run);
