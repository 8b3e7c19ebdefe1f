import { login as operation } from '../../shared/api/operations/auth.ts';
import { sessionCookies } from '../../shared/auth/cookies.ts';
import { signIn } from '../../shared/auth/session-requests.ts';
import { sessionCreated } from '../../shared/http/responses.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ body, sourceIp }) => {
  const { issued, me } = await signIn(
    { ...authPorts(), workspaces: workspaceRepository() },
    { token: body.token, sourceIp },
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return sessionCreated(me, sessionCookies(issued.token, issued.csrf, maxAge));
});
