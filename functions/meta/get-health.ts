import { getHealth as operation } from '#api/operations/meta.ts';
import { liveness } from '#domain/health.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';

export const handler = makeHandler(operation, async () => ok(liveness()));
