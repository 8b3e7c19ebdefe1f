import { getTileCacheJob as operation } from '../../shared/api/operations/tile-cache.ts';
import { presentTileCacheJob, requireTileCacheJob } from '../../shared/domain/tile-cache-jobs.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheJobRepository } from '../../shared/wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentTileCacheJob(await requireTileCacheJob(tileCacheJobRepository(), workspace.id, params.job))),
);
