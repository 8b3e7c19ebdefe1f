import { getConsoleConfig as operation } from '#api/operations/auth.ts';
import { consoleConfig } from '#auth/sessions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';

export const handler = makeHandler(operation, async () =>
  ok(consoleConfig(), { 'Cache-Control': 'public, max-age=60' }),
);
