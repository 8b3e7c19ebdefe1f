import type { WorkspaceRepository } from '#domain/workspaces.ts';
import type { AuthPorts } from './authenticate.ts';
import { describePrincipal } from './me.ts';
import type { Principal } from './principal.ts';
import { type IssuedSession, login, logout, type PendingSession, refresh, withSession } from './sessions.ts';

/**
 * The console's session requests (login, refreshSession, ADR 0109): the session issued, and the
 * caller as getAuthMe describes it with that session, so the console needs no second request.
 */

/** The ports a session request takes: authentication's, and the workspaces `me` names. */
export type SessionRequestDeps = AuthPorts & { workspaces: WorkspaceRepository };

/** What a session request answers: the session (for its cookies) and the caller. */
export interface SessionAnswer {
  issued: IssuedSession;
  me: Awaited<ReturnType<typeof describePrincipal>>;
}

/**
 * The session stored and the caller described with it, together: the description's reads don't
 * depend on the write (ADR 0154). When the write fails, the request fails as before.
 */
async function answer(
  deps: SessionRequestDeps,
  { issued, store }: PendingSession,
  principal: Principal,
): Promise<SessionAnswer> {
  const [, me] = await Promise.all([
    store(),
    describePrincipal(deps, { principal: withSession(principal, issued.session) }),
  ]);
  return { issued, me };
}

/** login: a credential exchanged for a browser session (refused: 401, 403 when off, 429 when limited). */
export async function signIn(
  deps: SessionRequestDeps,
  { token, sourceIp }: { token: string; sourceIp: string },
): Promise<SessionAnswer> {
  const pending = await login(deps, token, sourceIp);
  return answer(deps, pending, pending.issued.principal);
}

/** refreshSession: the session's pair rotated (the previous pair stays valid for its grace period). */
export async function renewSession(
  deps: SessionRequestDeps,
  { principal, cookieToken }: { principal: Principal; cookieToken: string | undefined },
): Promise<SessionAnswer> {
  return answer(deps, await refresh(deps, principal, cookieToken), principal);
}

/**
 * logout: the session this request came with ends, every cookie of it (ADR 0109); a request with
 * header credentials has no session, and nothing ends.
 */
export async function signOut(
  deps: AuthPorts,
  { principal, cookieToken }: { principal: Principal; cookieToken: string | undefined },
): Promise<void> {
  if (principal.session) await logout(deps, cookieToken);
}
