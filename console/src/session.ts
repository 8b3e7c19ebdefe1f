/**
 * The operator's session: who is signed in (GET /auth/me with the session cookie), token login,
 * the refresh a minute before the session would idle out, and logout. Components read it with
 * `useSession()`.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ConsoleApiError, call, onUnauthorized, type Schemas } from './api.ts';

export type Me = Schemas['AuthMe'];
export type ConsoleConfig = Schemas['ConsoleConfig'];

/** undefined: not known yet; null: nobody is signed in. */
let current: Me | null | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function set(me: Me | null): void {
  current = me;
  schedule();
  for (const listener of listeners) listener();
}

/** Refresh the session a minute before it would idle out (never after its hard expiry). */
function schedule(): void {
  clearTimeout(refreshTimer);
  refreshTimer = undefined;
  if (!current?.session_idle_expires_at) return;
  const idle = Date.parse(current.session_idle_expires_at);
  const hard = current.session_expires_at ? Date.parse(current.session_expires_at) : Number.POSITIVE_INFINITY;
  if (hard - Date.now() < 60_000) return;
  const at = Math.max(Math.min(idle, hard) - 60_000, Date.now() + 5_000);
  refreshTimer = setTimeout(() => void refresh(), Math.min(at - Date.now(), 2 ** 31 - 1));
}

/** Rotate the session (a concurrent refresh by another tab wins: then re-read who we are). */
export async function refresh(): Promise<void> {
  try {
    set(await call(api.POST('/api/v1/auth/refresh')));
  } catch (error) {
    if (error instanceof ConsoleApiError && error.status === 409) await load();
    else if (!(error instanceof ConsoleApiError && error.status === 401)) throw error;
  }
}

/** Who is signed in (null: nobody). */
export async function load(): Promise<Me | null> {
  try {
    set(await call(api.GET('/api/v1/auth/me')));
  } catch (error) {
    if (error instanceof ConsoleApiError && error.status === 401) set(null);
    else throw error;
  }
  return current ?? null;
}

/** Sign in with an API key or a JWT (an OIDC id token ends here too). */
export async function loginWithToken(token: string): Promise<Me> {
  const me = await call(api.POST('/api/v1/auth/login', { body: { token } }));
  set(me);
  return me;
}

/** End the session; the cookies are cleared by the answer. */
export async function logout(): Promise<void> {
  try {
    await call(api.POST('/api/v1/auth/logout'));
  } finally {
    set(null);
  }
}

/** The public console configuration (AuthConsoleConfig). */
export function consoleConfig(): Promise<ConsoleConfig> {
  return call(api.GET('/api/v1/console/config'));
}

/** The session, re-rendering the component when it changes. */
export function useSession(): Me | null | undefined {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return current;
}

// A 401 anywhere means the session is gone: back to the login page.
onUnauthorized(() => {
  if (current !== null) set(null);
});

/** The role the signed-in operator holds in a workspace ('super_admin' over all). */
export function roleIn(me: Me | null | undefined, workspace: string): string | undefined {
  if (!me) return undefined;
  if (me.super_admin) return 'super_admin';
  return me.workspaces.find((w) => w.name === workspace || w.id === workspace)?.role;
}
