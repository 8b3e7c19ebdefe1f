import { getCacheStats as operation } from '#api/operations/tile-cache.ts';
import { cacheStats } from '#domain/tile-cache.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { cacheRecords } from '#wiring/tile-cache.ts';

export const handler = makeHandler(operation, async () => ok(await cacheStats(cacheRecords())));
