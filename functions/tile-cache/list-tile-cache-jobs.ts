import { listTileCacheJobs as operation } from '#api/operations/tile-cache.ts';
import { listTileCacheJobs } from '#domain/tile-cache-jobs.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) =>
  ok(await listTileCacheJobs(tileCacheJobRepository(), workspace.id, query.limit, query.cursor)),
);
