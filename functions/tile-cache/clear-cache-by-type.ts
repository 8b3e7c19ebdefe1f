import { clearCacheByType as operation } from '#api/operations/tile-cache.ts';
import { clearCacheByType } from '#domain/tile-cache.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { cacheClearDeps } from '#wiring/tile-cache.ts';

export const handler = makeIdempotentHandler(operation, async ({ params }) =>
  ok(await clearCacheByType(cacheClearDeps(), { cacheType: params.cacheType })),
);
