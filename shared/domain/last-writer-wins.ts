import { StateConflictError } from './errors.ts';

/** How a lost race is retried: bounded attempts with jittered, growing pauses. */
export interface RetryPolicy {
  /** Tries in all (the first one included) before the conflict is reported. */
  attempts: number;
  /** The pause in milliseconds before retry `n` (1, 2, …). */
  delayMs(retry: number): number;
  sleep(ms: number): Promise<void>;
}

/**
 * Twelve tries, "full jitter" pauses (random up to 10 ms · 2^n, capped at 400 ms): twenty writers
 * of one item all land within a few hundred milliseconds, and the worst case (≈ 3.6 s of pauses)
 * stays far inside the API's 29 s. The cap bounds the work one request can cause (ADR 0075).
 */
export const defaultRetryPolicy: RetryPolicy = {
  attempts: 12,
  delayMs: (retry) => Math.random() * Math.min(400, 10 * 2 ** retry),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The reason repositories give when a conditional write lost to another writer. */
export const CONCURRENT_MODIFICATION = 'concurrent_modification';

/** Did a write lose to a concurrent writer (a failed version condition, or a transaction conflict)? */
export function isConcurrentModification(error: unknown): boolean {
  return error instanceof StateConflictError && error.reason === CONCURRENT_MODIFICATION;
}

/**
 * Runs one read-modify-write and, when it loses to a concurrent writer, runs it again on fresh
 * state — the caller who sent no If-Match asked for last-writer-wins (ADR 0075).
 *
 * `attempt(retry)` gets 0 on the first try (it may use state the caller already read) and the
 * retry number afterwards, when it must read the current state again. Each try checks If-Match
 * against what it read, so with If-Match a lost race becomes the 412 it is (the version the caller
 * named is gone), and a conflict that left that version in place (a nested group, a transaction
 * conflict) is simply tried again. Any other error ends the loop at once; after the last try the
 * conflict is reported (409 `concurrent_modification`).
 */
export async function lastWriterWins<T>(
  attempt: (retry: number) => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(retry);
    } catch (error) {
      if (!isConcurrentModification(error) || retry + 1 >= policy.attempts) throw error;
      await policy.sleep(policy.delayMs(retry + 1));
    }
  }
}

/**
 * {@link lastWriterWins} over an entity the caller has already read: the first try applies to
 * `current`, every retry to what `reread()` finds now.
 */
export function lastWriterWinsOn<E, T>(
  current: E,
  reread: () => Promise<E>,
  apply: (latest: E) => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
): Promise<T> {
  return lastWriterWins(async (retry) => apply(retry === 0 ? current : await reread()), policy);
}
