import { clearCacheByType as operation } from '../../shared/api/operations/tile-cache.ts';
import { parseCacheType } from '../../shared/domain/tile-cache.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { clearCachesHere } from '../../shared/wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ params }) =>
  ok(await clearCachesHere([parseCacheType(params.cacheType)])),
);
