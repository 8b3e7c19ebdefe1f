import { getConsoleConfig as operation } from '../../shared/api/operations/auth.ts';
import { consoleConfig } from '../../shared/auth/sessions.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';

export const handler = makeHandler(operation, async () =>
  ok(consoleConfig(), { 'Cache-Control': 'public, max-age=60' }),
);
