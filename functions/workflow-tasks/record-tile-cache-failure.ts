import { failTileCacheJob, type TileCacheWorkflowInput } from '#domain/tile-cache-jobs.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';
import { asWorkflowTask } from '#wiring/workflows.ts';
import { failureMessage } from '#workflows/tasks.ts';

/** "Record why the tile cache job failed": the job ends `failed` with the reason; its chunks stay done. */
async function run(
  event: TileCacheWorkflowInput & { error?: { Error?: string; Cause?: string } },
): Promise<TileCacheWorkflowInput> {
  const input = { job_id: event.job_id, workspace_id: event.workspace_id };
  await failTileCacheJob(tileCacheJobRepository(), input, failureMessage(event.error));
  return input;
}

export const handler = asWorkflowTask('tile-cache', (e) => e.job_id, run);
