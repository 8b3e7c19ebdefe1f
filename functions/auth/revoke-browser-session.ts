import { revokeBrowserSession as operation } from '#api/operations/auth.ts';
import { revokeBrowserSession } from '#domain/sessions.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { sessionRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await revokeBrowserSession({ sessions: sessionRepository() }, { session: params.session, ifMatch });
  return noContent();
});
