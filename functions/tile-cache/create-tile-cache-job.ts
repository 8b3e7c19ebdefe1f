import { locationOf } from '#api/operation.ts';
import { getTileCacheJob, createTileCacheJob as operation } from '#api/operations/tile-cache.ts';
import { createTileCacheJob, presentTileCacheJob } from '#domain/tile-cache-jobs.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { accepted } from '#http/responses.ts';
import { tileCacheJobDeps } from '#wiring/tile-cache.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const job = await createTileCacheJob(tileCacheJobDeps(), { workspaceId: workspace.id, body });
  return accepted(
    presentTileCacheJob(job),
    locationOf(getTileCacheJob, { workspace: workspace.id, job: job.id }),
  );
});
