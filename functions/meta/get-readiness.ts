import { getReadiness as operation } from '#api/operations/meta.ts';
import { readiness } from '#domain/health.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { readinessDeps } from '#wiring/health.ts';

export const handler = makeHandler(operation, async () => ok(await readiness(readinessDeps())));
