import { revokeBrowserSession as operation } from '#api/operations/auth.ts';
import { revokeBrowserSession } from '#domain/sessions.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { sessionRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await revokeBrowserSession(sessionRepository(), params.session, new Date(), ifMatch);
  return noContent();
});
