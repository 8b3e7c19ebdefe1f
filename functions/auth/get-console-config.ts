import { getConsoleConfig as operation } from '#api/operations/auth.ts';
import { consoleConfig } from '#auth/sessions.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';

export const handler = makeHandler(operation, async () =>
  ok(consoleConfig(), { 'Cache-Control': 'public, max-age=60' }),
);
