import { getTileCacheJobProgress as operation } from '#api/operations/tile-cache.ts';
import { requireTileCacheJob, tileCacheJobProgress } from '#domain/tile-cache-jobs.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(
    tileCacheJobProgress(
      await requireTileCacheJob(
        { jobs: tileCacheJobRepository() },
        { workspaceId: workspace.id, job: params.job },
      ),
    ),
  ),
);
