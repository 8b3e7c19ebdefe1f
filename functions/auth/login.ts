import { login as operation } from '#api/operations/auth.ts';
import { sessionCookies } from '#auth/cookies.ts';
import { signIn } from '#auth/session-requests.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { sessionCreated } from '#http/responses.ts';
import { authPorts } from '#wiring/access.ts';
import { workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ body, sourceIp }) => {
  const { issued, me } = await signIn(
    { ...authPorts(), workspaces: workspaceRepository() },
    { token: body.token, sourceIp },
  );
  const maxAge = (Date.parse(issued.session.expires_at) - Date.now()) / 1000;
  return sessionCreated(me, sessionCookies(issued.token, issued.csrf, maxAge));
});
