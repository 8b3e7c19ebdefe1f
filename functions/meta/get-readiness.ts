import { getReadiness as operation } from '#api/operations/meta.ts';
import { readiness } from '#domain/health.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { readinessDeps } from '#wiring/health.ts';

export const handler = makeHandler(operation, async () => ok(await readiness(readinessDeps())));
