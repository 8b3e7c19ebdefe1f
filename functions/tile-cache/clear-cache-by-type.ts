import { clearCacheByType as operation } from '#api/operations/tile-cache.ts';
import { parseCacheType } from '#domain/tile-cache.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { clearCachesHere } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ params }) =>
  ok(await clearCachesHere([parseCacheType(params.cacheType)])),
);
