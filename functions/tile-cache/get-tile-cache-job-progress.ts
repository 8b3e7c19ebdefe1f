import { getTileCacheJobProgress as operation } from '#api/operations/tile-cache.ts';
import { requireTileCacheJob, tileCacheJobProgress } from '#domain/tile-cache-jobs.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(tileCacheJobProgress(await requireTileCacheJob(tileCacheJobRepository(), workspace.id, params.job))),
);
