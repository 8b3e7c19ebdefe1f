import { clearCacheByType as operation } from '#api/operations/tile-cache.ts';
import { parseCacheType } from '#domain/tile-cache.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { clearCachesHere } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ params }) =>
  ok(await clearCachesHere([parseCacheType(params.cacheType)])),
);
