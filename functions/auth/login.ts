import { login as operation } from '../../shared/api/operations/auth.ts';
import { sessionCookies } from '../../shared/auth/cookies.ts';
import { describePrincipal } from '../../shared/auth/me.ts';
import { login, withSession } from '../../shared/auth/sessions.ts';
import { sessionCreated } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ body, sourceIp }) => {
  const issued = await login(authPorts(), body.token, sourceIp);
  const me = await describePrincipal(
    workspaceRepository(),
    claimMappingRepository(),
    withSession(issued.principal, issued.session),
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return sessionCreated(me, sessionCookies(issued.token, issued.csrf, maxAge));
});
