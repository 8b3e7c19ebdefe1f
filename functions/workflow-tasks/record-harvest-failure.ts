import { failHarvestJob, type HarvestWorkflowInput } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';
import { asWorkflowTask } from '../../shared/wiring/workflows.ts';
import { failureMessage } from '../../shared/workflows/deletion-tasks.ts';

/** "Record why the harvest failed": the job ends `failed` with the reason; its committed chunks stay. */
async function run(
  event: HarvestWorkflowInput & { error?: { Error?: string; Cause?: string } },
): Promise<HarvestWorkflowInput> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id, service_id: event.service_id };
  await failHarvestJob(harvestJobRepository(), input, failureMessage(event.error));
  return input;
}

export const handler = asWorkflowTask('harvest', (e) => e.job_id, run);
