import { getHealth as operation } from '../../shared/api/operations/meta.ts';
import { liveness } from '../../shared/domain/health.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeHandler(operation, async () => ok(liveness()));
