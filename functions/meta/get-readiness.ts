import { getReadiness as operation } from '../../shared/api/operations/meta.ts';
import { readiness } from '../../shared/domain/health.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { readinessDeps } from '../../shared/wiring/health.ts';

export const handler = makeHandler(operation, async () => ok(await readiness(readinessDeps())));
