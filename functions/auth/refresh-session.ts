import { refreshSession as operation } from '../../shared/api/operations/auth.ts';
import { parseCookies, SESSION_COOKIE, sessionCookies } from '../../shared/auth/cookies.ts';
import { describePrincipal } from '../../shared/auth/me.ts';
import { refresh, withSession } from '../../shared/auth/sessions.ts';
import { ok } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ principal, headers }) => {
  const issued = await refresh(authPorts(), principal, parseCookies(headers.cookie)[SESSION_COOKIE]);
  const me = await describePrincipal(
    workspaceRepository(),
    claimMappingRepository(),
    withSession(principal, issued.session),
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return { ...ok(me), cookies: sessionCookies(issued.token, issued.csrf, maxAge) };
});
