import { getConsoleConfig as operation } from '../../shared/api/operations/auth.ts';
import { consoleConfig } from '../../shared/auth/sessions.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeHandler(operation, async () =>
  ok(consoleConfig(), { 'Cache-Control': 'public, max-age=60' }),
);
