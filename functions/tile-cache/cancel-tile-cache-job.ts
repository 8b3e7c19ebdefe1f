import { locationOf } from '#api/operation.ts';
import { getTileCacheJob, cancelTileCacheJob as operation } from '#api/operations/tile-cache.ts';
import { cancelTileCacheJob, presentTileCacheJob } from '#domain/tile-cache-jobs.ts';
import { accepted } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const job = await cancelTileCacheJob(tileCacheJobRepository(), workspace.id, params.job, ifMatch);
  return accepted(
    presentTileCacheJob(job),
    locationOf(getTileCacheJob, { workspace: workspace.id, job: job.id }),
  );
});
