import { listTileCacheJobs as operation } from '#api/operations/tile-cache.ts';
import { listTileCacheJobs } from '#domain/tile-cache-jobs.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) =>
  ok(
    await listTileCacheJobs(
      { jobs: tileCacheJobRepository() },
      { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
    ),
  ),
);
