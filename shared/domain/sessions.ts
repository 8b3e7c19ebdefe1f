import { createHash, randomBytes, randomUUID } from 'node:crypto';

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

/** Port: session persistence. */
export interface SessionRepository {
  create(session: Session): Promise<void>;
  findByTokenHash(tokenHash: string): Promise<Session | undefined>;
  /**
   * Marks `previous` rotated (grace 30 s) and stores `next`, atomically; throws StateConflictError
   * when another refresh rotated it first.
   */
  rotate(previous: Session, next: Session, now: string, graceUntil: string): Promise<void>;
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
    if (pair.next_token_hash) pending.push(pair.next_token_hash);
    if (pair.previous_token_hash && sessionUsable(pair, now)) pending.push(pair.previous_token_hash);
  }
  return deleted;
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
