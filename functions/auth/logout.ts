import { logout as operation } from '#api/operations/auth.ts';
import { clearedCookies, parseCookies, SESSION_COOKIE } from '#auth/cookies.ts';
import { signOut } from '#auth/session-requests.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { authPorts } from '#wiring/access.ts';

export const handler = makeIdempotentHandler(operation, async ({ principal, headers }) => {
  await signOut(authPorts(), { principal, cookieToken: parseCookies(headers.cookie)[SESSION_COOKIE] });
  return { ...noContent(), cookies: clearedCookies() };
});
