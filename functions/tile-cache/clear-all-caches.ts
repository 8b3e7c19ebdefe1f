import { clearAllCaches as operation } from '#api/operations/tile-cache.ts';
import { CACHE_TYPES, clearCaches } from '#domain/tile-cache.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { cacheClearDeps } from '#wiring/tile-cache.ts';

export const handler = makeIdempotentHandler(operation, async () =>
  ok(await clearCaches(cacheClearDeps(), { types: CACHE_TYPES })),
);
