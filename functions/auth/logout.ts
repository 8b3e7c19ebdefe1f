import { logout as operation } from '../../shared/api/operations/auth.ts';
import { clearedCookies, parseCookies, SESSION_COOKIE } from '../../shared/auth/cookies.ts';
import { signOut } from '../../shared/auth/session-requests.ts';
import { noContent } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeChangeHandler(operation, async ({ principal, headers }) => {
  await signOut(authPorts(), { principal, cookieToken: parseCookies(headers.cookie)[SESSION_COOKIE] });
  return { ...noContent(), cookies: clearedCookies() };
});
