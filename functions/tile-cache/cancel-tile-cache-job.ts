import { locationOf } from '#api/operation.ts';
import { getTileCacheJob, cancelTileCacheJob as operation } from '#api/operations/tile-cache.ts';
import { cancelTileCacheJob, presentTileCacheJob } from '#domain/tile-cache-jobs.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const job = await cancelTileCacheJob(
    { jobs: tileCacheJobRepository() },
    { workspaceId: workspace.id, job: params.job, ifMatch },
  );
  return accepted(
    presentTileCacheJob(job),
    locationOf(getTileCacheJob, { workspace: workspace.id, job: job.id }),
  );
});
