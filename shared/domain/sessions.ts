import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { NotFoundError } from './errors.ts';
import type { Page, PageQuery } from './page.ts';
import { checkVersion } from './workspaces.ts';

/** What a session stands on: re-checked on every request, so revoking the key ends the session. */
export type SessionCredential =
  | { type: 'apikey'; key_hash: string; key_id: string }
  | { type: 'jwt'; sub: string; claims: Record<string, unknown> };

/** A browser session as stored: only hashes of the cookie values. */
export interface Session {
  session_id: string;
  token_hash: string;
  csrf_hash: string;
  credential: SessionCredential;
  expires_at: string;
  idle_expires_at: string;
  created_at: string;
  /** Set when refresh rotated this pair; it stays valid until `grace_until`. */
  rotated_at?: string;
  grace_until?: string;
  /** The pair this one replaced (set by refresh): logout ends it too (ADR 0109). */
  previous_token_hash?: string;
  /** The pair that replaced this one (set by refresh, with `rotated_at`). */
  next_token_hash?: string;
}

/** Who holds a browser session, as listed (ADR 0134): no secret, no cookie, no hash. */
export interface SessionHolder {
  /** The display subject (key name or owner, token `sub`). */
  principal: string;
  /** `apikey:<id>` or `jwt:<sub>`. */
  principal_id: string;
  auth_method: 'apikey' | 'jwt';
  api_key_id?: string;
  /** The token's `iss` (token sessions signed in since ADR 0134). */
  issuer?: string;
  /** The roles as derived at sign-in or the last refresh (each request derives them again). */
  super_admin: boolean;
  workspace_roles: { workspace: string; role: string }[];
  /** How many workspace roles there were (`workspace_roles` lists at most MAX_LISTED_ROLES). */
  workspace_role_count: number;
}

/** The most workspace roles a listed session names (the count says how many there were). */
export const MAX_LISTED_ROLES = 20;

/**
 * The listing entry of one browser session (ADR 0134), keyed by its public id (`session_id`, kept
 * across rotations): a rotated pair and its successor are one entry.
 */
export interface ListedSession extends SessionHolder {
  session_id: string;
  /** The newest pair's hash, what a revocation starts from: stored, never answered. */
  token_hash: string;
  /** Refreshes so far; the entry's version (its ETag) is one more. */
  rotations: number;
  created_at: string;
  refreshed_at?: string;
  expires_at: string;
  idle_expires_at: string;
}

/** Port: session persistence. */
export interface SessionRepository {
  /** Stores a new pair; with `holder`, its listing entry in the same transaction. */
  create(session: Session, holder?: SessionHolder): Promise<void>;
  findByTokenHash(tokenHash: string): Promise<Session | undefined>;
  /**
   * Marks `previous` rotated (grace 30 s) and stores `next`, atomically, pointing the session's
   * listing entry at `next` (writing it for a session signed in before the listing existed);
   * throws StateConflictError when another refresh rotated it first.
   */
  rotate(
    previous: Session,
    next: Session,
    now: string,
    graceUntil: string,
    holder: SessionHolder,
  ): Promise<void>;
  /** The listing entry of a session by its public id. */
  findListed(sessionId: string): Promise<ListedSession | undefined>;
  /** A page of the sessions not yet expired at `now`, newest first. */
  listListed(limit: number, cursor: string | undefined, now: string): Promise<Page<ListedSession>>;
  /** Removes a session's listing entry (logout: bookkeeping, not audited); no-op when absent. */
  removeListed(sessionId: string): Promise<void>;
  /** Removes a session's listing entry as a revocation (audited, ADR 0094); NotFoundError when absent. */
  revokeListed(sessionId: string): Promise<void>;
  /**
   * Deletes one pair and answers it as it was when deleted (undefined when there was none): its
   * links to the pairs before and after it are read in the same write, so a refresh that
   * committed first is seen, and one that comes after finds nothing to rotate.
   */
  delete(tokenHash: string): Promise<Session | undefined>;
  /** Failed logins of a client address in a time window. */
  failedLogins(address: string, window: number): Promise<number>;
  recordFailedLogin(address: string, window: number, expiresAtEpoch: number): Promise<void>;
}

/** Grace period of a rotated pair (DESIGN §6). */
export const ROTATION_GRACE_MS = 30_000;

/** The most pairs one logout deletes (a bound on a session refreshed over and over within its grace). */
export const MAX_LOGOUT_PAIRS = 256;

/**
 * Ends a whole session (ADR 0109): the pair of the cookie, every pair it replaced that may still
 * be in its grace, and every pair that replaced it. Each deletion answers the pair's links, so the
 * chain is walked from what was deleted. A pair before one that was already unusable is older
 * still (rotation graces end in order), so the walk back stops there.
 */
export async function endSession(
  sessions: Pick<SessionRepository, 'delete'>,
  tokenHash: string,
  now: Date,
  ended?: Set<string>,
): Promise<number> {
  const pending = [tokenHash];
  const seen = new Set<string>();
  let deleted = 0;
  while (pending.length > 0 && seen.size < MAX_LOGOUT_PAIRS) {
    const hash = pending.pop() as string;
    if (seen.has(hash)) continue;
    seen.add(hash);
    const pair = await sessions.delete(hash);
    if (!pair) continue;
    deleted += 1;
    ended?.add(pair.session_id);
    if (pair.next_token_hash) pending.push(pair.next_token_hash);
    if (pair.previous_token_hash && sessionUsable(pair, now)) pending.push(pair.previous_token_hash);
  }
  return deleted;
}

/** Logout (ADR 0109) with its listing entries: the pairs first, so no refresh can list it again. */
export async function endSessionAndListing(
  sessions: Pick<SessionRepository, 'delete' | 'removeListed'>,
  tokenHash: string,
  now: Date,
): Promise<void> {
  const ended = new Set<string>();
  await endSession(sessions, tokenHash, now, ended);
  for (const id of ended) await sessions.removeListed(id);
}

/** The version of a listed session (its ETag): 1 at sign-in, one more per refresh. */
export function listedSessionVersion(listed: Pick<ListedSession, 'rotations'>): number {
  return (listed.rotations ?? 0) + 1;
}

/** The listed browser session of a public id, or 404. */
export async function requireListedSession(
  sessions: Pick<SessionRepository, 'findListed'>,
  sessionId: string,
): Promise<ListedSession> {
  const listed = await sessions.findListed(sessionId.toLowerCase());
  if (!listed) throw new NotFoundError('session_not_found', 'No browser session has this id.');
  return listed;
}

/** A page of the browser sessions not yet expired at `now`, newest first (listBrowserSessions). */
export function listBrowserSessions(
  { sessions }: { sessions: Pick<SessionRepository, 'listListed'> },
  { limit, cursor, now = new Date() }: PageQuery & { now?: Date },
): Promise<Page<ListedSession>> {
  return sessions.listListed(limit, cursor, now.toISOString());
}

/**
 * Revokes a browser session by its public id (ADR 0134): every pair of it — the newest, the ones
 * it replaced still in their grace, any a concurrent refresh added (their links are read as they
 * are deleted) — and then its listing entry, audited. Sessions are read on every request, so the
 * next request with any of its cookies is a 401. The pairs go first: a refresh needs its pair,
 * so once they are gone nothing can point the entry at a new one.
 */
export async function revokeBrowserSession(
  { sessions }: { sessions: Pick<SessionRepository, 'delete' | 'findListed' | 'revokeListed'> },
  { session: sessionId, ifMatch, now = new Date() }: { session: string; ifMatch?: string; now?: Date },
): Promise<void> {
  const listed = await requireListedSession(sessions, sessionId);
  checkVersion({ version: listedSessionVersion(listed) }, ifMatch);
  await endSession(sessions, listed.token_hash, now);
  await sessions.revokeListed(listed.session_id);
}

/** SHA-256 hex of a cookie value. */
export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** A fresh pair of cookie values: the session token and the CSRF token. */
export function newSessionSecrets(): { token: string; csrf: string } {
  return { token: randomBytes(32).toString('base64url'), csrf: randomBytes(32).toString('base64url') };
}

/** Is the session usable at `now` (not expired, not idle, not past its rotation grace)? */
export function sessionUsable(s: Session, now: Date): boolean {
  const t = now.getTime();
  if (Date.parse(s.expires_at) <= t || Date.parse(s.idle_expires_at) <= t) return false;
  if (s.grace_until && Date.parse(s.grace_until) <= t) return false;
  return true;
}

/** Builds a new session; `capAt` (a token's `exp`) bounds the absolute expiry. */
export function newSession(
  credential: SessionCredential,
  ttlSeconds: number,
  idleSeconds: number,
  now: Date,
  capAt?: Date,
): { session: Session; token: string; csrf: string } {
  const { token, csrf } = newSessionSecrets();
  let expires = now.getTime() + ttlSeconds * 1000;
  if (capAt) expires = Math.min(expires, capAt.getTime());
  const idle = Math.min(expires, now.getTime() + idleSeconds * 1000);
  return {
    token,
    csrf,
    session: {
      session_id: randomUUID(),
      token_hash: hashSecret(token),
      csrf_hash: hashSecret(csrf),
      credential,
      expires_at: new Date(expires).toISOString(),
      idle_expires_at: new Date(idle).toISOString(),
      created_at: now.toISOString(),
    },
  };
}

/** The successor of a session on refresh: new values, same id and absolute expiry, idle renewed. */
export function rotatedSession(
  previous: Session,
  idleSeconds: number,
  now: Date,
): { session: Session; token: string; csrf: string } {
  const { token, csrf } = newSessionSecrets();
  const idle = Math.min(Date.parse(previous.expires_at), now.getTime() + idleSeconds * 1000);
  return {
    token,
    csrf,
    session: {
      session_id: previous.session_id,
      token_hash: hashSecret(token),
      csrf_hash: hashSecret(csrf),
      credential: previous.credential,
      expires_at: previous.expires_at,
      idle_expires_at: new Date(idle).toISOString(),
      created_at: now.toISOString(),
      previous_token_hash: previous.token_hash,
    },
  };
}
