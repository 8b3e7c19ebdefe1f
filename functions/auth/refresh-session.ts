import { refreshSession as operation } from '../../shared/api/operations/auth.ts';
import { parseCookies, SESSION_COOKIE, sessionCookies } from '../../shared/auth/cookies.ts';
import { renewSession } from '../../shared/auth/session-requests.ts';
import { ok } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ principal, headers }) => {
  const { issued, me } = await renewSession(
    { ...authPorts(), workspaces: workspaceRepository() },
    { principal, cookieToken: parseCookies(headers.cookie)[SESSION_COOKIE] },
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return { ...ok(me), cookies: sessionCookies(issued.token, issued.csrf, maxAge) };
});
