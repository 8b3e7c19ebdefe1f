import { refreshSession as operation } from '#api/operations/auth.ts';
import { parseCookies, SESSION_COOKIE, sessionCookies } from '#auth/cookies.ts';
import { renewSession } from '#auth/session-requests.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { authPorts } from '#wiring/access.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ principal, headers }) => {
  const { issued, me } = await renewSession(
    { ...authPorts(), workspaces: workspaceRepository() },
    { principal, cookieToken: parseCookies(headers.cookie)[SESSION_COOKIE] },
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return { ...ok(me), cookies: sessionCookies(issued.token, issued.csrf, maxAge) };
});
