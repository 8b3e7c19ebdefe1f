import { listTileCacheJobs as operation } from '../../shared/api/operations/tile-cache.ts';
import { listTileCacheJobs } from '../../shared/domain/tile-cache-jobs.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheJobRepository } from '../../shared/wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) =>
  ok(await listTileCacheJobs(tileCacheJobRepository(), workspace.id, query.limit, query.cursor)),
);
