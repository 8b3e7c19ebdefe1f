import { failHarvestJob, type HarvestWorkflowInput } from '../../shared/domain/mosaic-harvest-jobs.ts';
import { harvestJobRepository } from '../../shared/wiring/mosaic-harvest-jobs.ts';
import { asSystemChange } from '../../shared/wiring/workflows.ts';
import { failureMessage, taskFailure } from '../../shared/workflows/deletion-tasks.ts';

/** "Record why the harvest failed": the job ends `failed` with the reason; its committed chunks stay. */
async function run(
  event: HarvestWorkflowInput & { error?: { Error?: string; Cause?: string } },
): Promise<HarvestWorkflowInput> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id, service_id: event.service_id };
  try {
    await failHarvestJob(harvestJobRepository(), input, failureMessage(event.error));
    return input;
  } catch (error) {
    throw taskFailure(error);
  }
}

export const handler = asSystemChange('harvest', (e) => e.job_id, run);
