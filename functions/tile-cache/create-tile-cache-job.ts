import { locationOf } from '../../shared/api/operation.ts';
import { getTileCacheJob, createTileCacheJob as operation } from '../../shared/api/operations/tile-cache.ts';
import { createTileCacheJob, presentTileCacheJob } from '../../shared/domain/tile-cache-jobs.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheJobDeps } from '../../shared/wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const job = await createTileCacheJob(tileCacheJobDeps(), workspace.id, body);
  return accepted(
    presentTileCacheJob(job),
    locationOf(getTileCacheJob, { workspace: workspace.id, job: job.id }),
  );
});
