import { locationOf } from '../../shared/api/operation.ts';
import { getTileCacheJob, cancelTileCacheJob as operation } from '../../shared/api/operations/tile-cache.ts';
import { cancelTileCacheJob, presentTileCacheJob } from '../../shared/domain/tile-cache-jobs.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheJobRepository } from '../../shared/wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const job = await cancelTileCacheJob(tileCacheJobRepository(), workspace.id, params.job, ifMatch);
  return accepted(
    presentTileCacheJob(job),
    locationOf(getTileCacheJob, { workspace: workspace.id, job: job.id }),
  );
});
