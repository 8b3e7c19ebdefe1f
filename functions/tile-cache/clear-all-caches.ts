import { clearAllCaches as operation } from '#api/operations/tile-cache.ts';
import { CACHE_TYPES, clearCaches } from '#domain/tile-cache.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { cacheClearDeps } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async () =>
  ok(await clearCaches(cacheClearDeps(), { types: CACHE_TYPES })),
);
