import { getTileCacheJobProgress as operation } from '../../shared/api/operations/tile-cache.ts';
import { requireTileCacheJob, tileCacheJobProgress } from '../../shared/domain/tile-cache-jobs.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheJobRepository } from '../../shared/wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(tileCacheJobProgress(await requireTileCacheJob(tileCacheJobRepository(), workspace.id, params.job))),
);
