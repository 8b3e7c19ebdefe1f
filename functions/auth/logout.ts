import { logout as operation } from '../../shared/api/operations/auth.ts';
import { clearedCookies, parseCookies, SESSION_COOKIE } from '../../shared/auth/cookies.ts';
import { logout } from '../../shared/auth/sessions.ts';
import { noContent } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeChangeHandler(operation, async ({ principal, headers }) => {
  // The session this request came with ends, every cookie of it (ADR 0109); header credentials have none.
  if (principal.session) await logout(authPorts(), parseCookies(headers.cookie)[SESSION_COOKIE]);
  return { ...noContent(), cookies: clearedCookies() };
});
