import { revokeBrowserSession as operation } from '../../shared/api/operations/auth.ts';
import { revokeBrowserSession } from '../../shared/domain/sessions.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { sessionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await revokeBrowserSession(sessionRepository(), params.session, new Date(), ifMatch);
  return noContent();
});
