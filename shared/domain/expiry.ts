/**
 * When stored items expire (ADR 0093): the epoch seconds written in the table's TTL attribute
 * (`expires_at_epoch`). DynamoDB removes an item some time after that moment; whatever reads it
 * must still refuse it once expired (authentication does).
 */

/** Expired API keys stay listed (and refused) this long before the table's TTL removes their record. */
export const EXPIRED_API_KEY_RETENTION_SECONDS = 30 * 24 * 3600;

/** The TTL (epoch seconds) of a moment given as RFC 3339, rounded up: never before the moment itself. */
export function expiryEpoch(expiresAt: string, afterSeconds = 0): number {
  return Math.ceil(Date.parse(expiresAt) / 1000) + afterSeconds;
}

/**
 * The TTLs of an API key's two items: its hash lookup item (what authentication reads) expires with
 * the key; its record stays `EXPIRED_API_KEY_RETENTION_SECONDS` longer so listings show the key as
 * expired. A key without `expires_at` never expires.
 */
export function apiKeyExpiry(key: {
  expires_at?: string;
}): { record: number; credential: number } | undefined {
  if (!key.expires_at) return undefined;
  return {
    credential: expiryEpoch(key.expires_at),
    record: expiryEpoch(key.expires_at, EXPIRED_API_KEY_RETENTION_SECONDS),
  };
}

/** True when an item with this TTL is expired at `now` (DynamoDB's own rule: the epoch is in the past). */
export function isExpired(expiresAtEpoch: number | undefined, now: Date): boolean {
  return expiresAtEpoch !== undefined && expiresAtEpoch < Math.floor(now.getTime() / 1000);
}
