import { getPersistentTileCacheStats as operation } from '#api/operations/tile-cache.ts';
import { tileCacheStats } from '#domain/tile-cache.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { tileCacheStatsDeps } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await tileCacheStats(tileCacheStatsDeps(), { workspaceId: workspace.id })),
);
