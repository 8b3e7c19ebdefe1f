import { failHarvestJob, type HarvestWorkflowInput } from '#domain/mosaic-harvest-jobs.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';
import { failureMessage } from '#workflows/tasks.ts';

/** "Record why the harvest failed": the job ends `failed` with the reason; its committed chunks stay. */
async function run(
  event: HarvestWorkflowInput & { error?: { Error?: string; Cause?: string } },
): Promise<HarvestWorkflowInput> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id, service_id: event.service_id };
  await failHarvestJob(harvestJobRepository(), input, failureMessage(event.error));
  return input;
}

export const handler = asWorkflowTask('harvest', (e) => e.job_id, run);
