import { config } from '#config/env.ts';
import { hashApiKey } from '#domain/api-keys.ts';
import { InvalidInputError, StateConflictError } from '#domain/errors.ts';
import { API_KEY_PATTERN } from '#domain/identifiers.ts';
import {
  endSessionAndListing,
  hashSecret,
  MAX_LISTED_ROLES,
  newSession,
  ROTATION_GRACE_MS,
  rotatedSession,
  type Session,
  type SessionCredential,
  type SessionHolder,
  sessionUsable,
} from '#domain/sessions.ts';
import {
  type AuthPorts,
  principalFromApiKey,
  principalFromBearer,
  sessionPrincipal,
} from './authenticate.ts';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from './errors.ts';
import type { Principal } from './principal.ts';

const FAILURE_WINDOW_MS = 5 * 60 * 1000;

/** A new or rotated session with its cookie values (returned once, never stored). */
export interface IssuedSession {
  principal: Principal;
  session: Session;
  token: string;
  csrf: string;
}

/** Who holds a session, for its listing entry (ADR 0134): the principal as derived now, no secret. */
export function sessionHolder(principal: Principal, issuer?: string): SessionHolder {
  const roles = Object.entries(principal.roles).map(([workspace, role]) => ({ workspace, role }));
  return {
    principal: principal.subject,
    principal_id: principal.id,
    auth_method: principal.authMethod,
    ...(principal.apiKeyId ? { api_key_id: principal.apiKeyId } : {}),
    ...(issuer ? { issuer } : {}),
    super_admin: principal.superAdmin,
    workspace_roles: roles.slice(0, MAX_LISTED_ROLES),
    workspace_role_count: roles.length,
  };
}

/** The console's login switches (DESIGN §6); a switched-off method is a 403. */
function assertLoginEnabled(): void {
  const cfg = config();
  if (!cfg.CONSOLE_AUTH_ENABLED || !cfg.CONSOLE_TOKEN_LOGIN) {
    throw new ForbiddenError('login_disabled', 'Token login is switched off in the console configuration.');
  }
}

/** A session issued and not yet stored: `store` writes it (its cookies are good once it did). */
export interface PendingSession {
  issued: IssuedSession;
  store: () => Promise<void>;
}

/**
 * Exchanges a JWT or an API key for a browser session, issued (the caller stores it). Failures
 * count against the client address; past the limit within 5 minutes logins answer 429 until the
 * window ends.
 */
export async function login(
  ports: AuthPorts,
  presented: string,
  address: string,
  now = new Date(),
): Promise<PendingSession> {
  assertLoginEnabled();
  const window = Math.floor(now.getTime() / FAILURE_WINDOW_MS);
  const windowEnd = (window + 1) * FAILURE_WINDOW_MS;
  if ((await ports.sessions.failedLogins(address, window)) >= config().LOGIN_FAILURE_LIMIT) {
    throw new RateLimitedError(Math.max(1, Math.ceil((windowEnd - now.getTime()) / 1000)));
  }
  let principal: Principal;
  let credential: SessionCredential;
  let capAt: Date | undefined;
  let issuer: string | undefined;
  try {
    if (API_KEY_PATTERN.test(presented)) {
      principal = await principalFromApiKey(ports, presented, now);
      credential = { type: 'apikey', key_hash: hashApiKey(presented), key_id: principal.apiKeyId as string };
    } else {
      const verified = await principalFromBearer(ports, presented);
      principal = verified.principal;
      credential = { type: 'jwt', sub: principal.subject, claims: principal.claims ?? {} };
      if (typeof verified.payload.exp === 'number') capAt = new Date(verified.payload.exp * 1000);
      if (typeof verified.payload.iss === 'string') issuer = verified.payload.iss;
    }
  } catch (error) {
    if (error instanceof UnauthenticatedError) {
      await ports.sessions.recordFailedLogin(address, window, Math.ceil(windowEnd / 1000) + 60);
    }
    throw error;
  }
  const cfg = config();
  const issued = newSession(credential, cfg.SESSION_TTL_SECONDS, cfg.SESSION_IDLE_SECONDS, now, capAt);
  return {
    issued: { principal, ...issued },
    store: () => ports.sessions.create(issued.session, sessionHolder(principal, issuer)),
  };
}

/**
 * Rotates the session of the cookie (spec 4.16): the next pair, issued (the caller stores it).
 * Header credentials can't be refreshed (400); a pair that was already rotated is a 409 — here,
 * or from `store` when a concurrent refresh rotated it first — so exactly one of them wins.
 */
export async function refresh(
  ports: AuthPorts,
  principal: Principal,
  cookieToken: string | undefined,
  now = new Date(),
): Promise<PendingSession> {
  if (!principal.session || !cookieToken) {
    throw new InvalidInputError(
      'session_required',
      'Only a browser session can be refreshed; header credentials cannot.',
    );
  }
  const current = await ports.sessions.findByTokenHash(hashSecret(cookieToken));
  if (!current || !sessionUsable(current, now)) throw new UnauthenticatedError();
  if (current.rotated_at) {
    throw new StateConflictError(
      'session_already_refreshed',
      'This session was refreshed by another request; use the newest cookies.',
    );
  }
  const next = rotatedSession(current, config().SESSION_IDLE_SECONDS, now);
  return {
    issued: { principal, ...next },
    store: () =>
      ports.sessions.rotate(
        current,
        next.session,
        now.toISOString(),
        new Date(now.getTime() + ROTATION_GRACE_MS).toISOString(),
        sessionHolder(principal),
      ),
  };
}

/**
 * Ends the session of the cookie, if any: the pair presented and the pairs a refresh linked to it
 * (the one it replaced, still in its 30 s grace, and any that replaced it), so no cookie of the
 * session outlives the logout (ADR 0109).
 */
export async function logout(
  ports: AuthPorts,
  cookieToken: string | undefined,
  now = new Date(),
): Promise<void> {
  if (cookieToken) await endSessionAndListing(ports.sessions, hashSecret(cookieToken), now);
}

/** The principal as the new session presents it. */
export function withSession(principal: Principal, session: Session): Principal {
  return sessionPrincipal(principal, session, true);
}

/** The public console configuration (spec: AuthConsoleConfig); never contains secrets. */
export function consoleConfig() {
  const cfg = config();
  const oidcEnabled = Boolean(cfg.OIDC_ISSUER && cfg.OIDC_CLIENT_ID);
  const scopes = [...new Set(['openid', ...cfg.OIDC_SCOPES.split(/[\s,]+/).filter(Boolean)])];
  const groupClaims = cfg.OIDC_GROUP_CLAIMS?.split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  return {
    auth: {
      enabled: cfg.CONSOLE_AUTH_ENABLED,
      method: oidcEnabled ? 'oidc' : 'token',
      password_login: false,
      token_login: cfg.CONSOLE_AUTH_ENABLED && cfg.CONSOLE_TOKEN_LOGIN,
      oidc: {
        enabled: oidcEnabled,
        issuer: cfg.OIDC_ISSUER ?? '',
        client_id: cfg.OIDC_CLIENT_ID,
        redirect_uri: cfg.OIDC_REDIRECT_URI,
        scopes,
        ...(groupClaims?.length ? { group_claims: groupClaims } : {}),
      },
    },
  };
}
