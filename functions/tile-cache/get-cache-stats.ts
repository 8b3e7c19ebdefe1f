import { getCacheStats as operation } from '../../shared/api/operations/tile-cache.ts';
import { cacheStats } from '../../shared/domain/tile-cache.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { cacheRecords } from '../../shared/wiring/tile-cache.ts';

export const handler = makeHandler(operation, async () => ok(await cacheStats(cacheRecords())));
