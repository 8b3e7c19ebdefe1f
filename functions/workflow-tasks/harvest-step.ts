import { harvestStepBudgetMs } from '#config/env.ts';
import { type HarvestWorkflowInput, runHarvestStep } from '#domain/mosaic-harvest-jobs.ts';
import { harvestStepDeps } from '#wiring/mosaic-harvest-jobs.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';

/** "Harvest the next chunks of files": chunks until the job is finished or the budget is spent. */
async function run(event: HarvestWorkflowInput): Promise<HarvestWorkflowInput & { done: boolean }> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id, service_id: event.service_id };
  const { done } = await runHarvestStep(harvestStepDeps(), input, harvestStepBudgetMs());
  return { ...input, done };
}

export const handler = asWorkflowTask('harvest', (e) => e.job_id, run);
