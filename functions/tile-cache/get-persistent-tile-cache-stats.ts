import { getPersistentTileCacheStats as operation } from '../../shared/api/operations/tile-cache.ts';
import { tileCacheStats } from '../../shared/domain/tile-cache.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileCacheStatsDeps } from '../../shared/wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await tileCacheStats(tileCacheStatsDeps(), workspace.id)),
);
