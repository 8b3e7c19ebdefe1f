import { clearAllCaches as operation } from '#api/operations/tile-cache.ts';
import { CACHE_TYPES } from '#domain/tile-cache.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { clearCachesHere } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async () => ok(await clearCachesHere(CACHE_TYPES)));
