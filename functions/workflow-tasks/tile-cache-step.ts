import { tileCacheStepBudgetMs } from '#config/env.ts';
import { runTileCacheStep, type TileCacheWorkflowInput } from '#domain/tile-cache-jobs.ts';
import { tileCacheStepDeps } from '#wiring/data-plane.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';

/** "Run the next chunks of tiles": chunks until the job is finished or the budget is spent. */
async function run(event: TileCacheWorkflowInput): Promise<TileCacheWorkflowInput & { done: boolean }> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id };
  const { done } = await runTileCacheStep(tileCacheStepDeps(), input, tileCacheStepBudgetMs());
  return { ...input, done };
}

export const handler = asWorkflowTask('tile-cache', (e) => e.job_id, run);
