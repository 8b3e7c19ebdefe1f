import { getHealth as operation } from '#api/operations/meta.ts';
import { liveness } from '#domain/health.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';

export const handler = makeHandler(operation, async () => ok(liveness()));
