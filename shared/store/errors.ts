import { InvalidInputError, UnavailableError } from '#domain/errors.ts';
import { markThrottled } from '#telemetry/metrics.ts';

/** Reasons DynamoDB gave for each item of a cancelled transaction (`None` when that item passed). */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (
    error &&
    typeof error === 'object' &&
    (error as { name?: string }).name === 'TransactionCanceledException'
  ) {
    const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons.map((r) => r.Code ?? 'None');
  }
  return undefined;
}

/**
 * True when DynamoDB refused a write because another transaction held one of its items: a
 * transaction cancelled with a `TransactionConflict` reason, or a `TransactionConflictException`.
 * The write lost a race, exactly like a failed version condition (DynamoDB Local never says so;
 * tests inject it).
 */
export function isTransactionConflict(error: unknown): boolean {
  if ((error as { name?: string } | undefined)?.name === 'TransactionConflictException') return true;
  return cancellationCodes(error)?.includes('TransactionConflict') ?? false;
}

/** True when a single-item write failed its condition. */
export function isConditionFailure(error: unknown): boolean {
  return (
    !!error &&
    typeof error === 'object' &&
    (error as { name?: string }).name === 'ConditionalCheckFailedException'
  );
}

const unavailableNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'TransactionConflictException',
  'TransactionInProgressException',
  'ResourceNotFoundException',
]);

/** DynamoDB's names for a request refused for capacity or rate (counted as `Throttled`, ADR 0092). */
const throttleNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** True when DynamoDB throttled the call: by the error's name, or a transaction item's `ThrottlingError`. */
export function isThrottling(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  if (name && throttleNames.has(name)) return true;
  return cancellationCodes(error)?.includes('ThrottlingError') ?? false;
}

/** DynamoDB's refusal of an item over its 400 KB limit (the message is the only marker it gives). */
const ITEM_TOO_LARGE = /item size has exceeded the maximum allowed size|item size to update has exceeded/i;

/**
 * True when DynamoDB refused a write because an item would exceed 400 KB: a ValidationException,
 * or a cancelled transaction whose reason for one item says so.
 */
export function isItemTooLarge(error: unknown): boolean {
  const e = error as {
    name?: string;
    message?: string;
    CancellationReasons?: { Code?: string; Message?: string }[];
  };
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'ValidationException' && ITEM_TOO_LARGE.test(e.message ?? '')) return true;
  return (
    e.name === 'TransactionCanceledException' &&
    (e.CancellationReasons ?? []).some((r) => ITEM_TOO_LARGE.test(r.Message ?? ''))
  );
}

/** True when DynamoDB refused an item whose maps and lists nest deeper than its 32 levels. */
export function isItemTooDeep(error: unknown): boolean {
  const e = error as { name?: string; message?: string };
  return !!e && e.name === 'ValidationException' && /nesting levels have exceeded/i.test(e.message ?? '');
}

/**
 * Translates persistence failures that are not condition failures: an item over DynamoDB's size
 * or nesting limit is the client's oversized input (400, ADR 0073); throttling, timeouts, refused
 * connections and a missing table are outages (503); anything else is rethrown as a bug.
 */
export function translateStoreError(error: unknown): never {
  const e = error as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  if (isItemTooLarge(error)) {
    throw new InvalidInputError(
      'item_too_large',
      "The resource would exceed the catalog store's 400 KB item limit; shorten its longest fields.",
    );
  }
  if (isItemTooDeep(error)) {
    throw new InvalidInputError(
      'item_too_deep',
      "The resource nests deeper than the catalog store's 32 levels; flatten it.",
    );
  }
  const code = e?.code ?? e?.cause?.code;
  const transactionConflict = cancellationCodes(error)?.some(
    (c) => c === 'TransactionConflict' || c === 'ThrottlingError',
  );
  if (
    transactionConflict ||
    (e?.name && unavailableNames.has(e.name)) ||
    (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) ||
    (e?.$metadata?.httpStatusCode ?? 0) >= 500
  ) {
    const outage = new UnavailableError(
      'store_unavailable',
      'The catalog store is temporarily unavailable; retry shortly.',
      undefined,
      { cause: error },
    );
    // The same 503 for the client; the edge counts it as `Throttled` (ADR 0092).
    throw isThrottling(error) ? markThrottled(outage) : outage;
  }
  throw error;
}

/** What a caller makes of a refused call, beside the translation every call gets. */
export interface Outcomes {
  /**
   * The error of a failed condition: of the single item written, or of the transaction item at
   * `index` (the first that failed). `undefined` leaves the failure to `translateStoreError`.
   */
  onConditionFailed?: (index: number) => Error | undefined;
  /** The error of a write that lost to a concurrent transaction (else a 503). */
  onTransactionConflict?: () => Error;
  /** Every cancelled transaction, whatever its reasons, first (undefined: handled as above). */
  onCancelled?: (codes: string[], error: unknown) => Error | undefined;
}

/**
 * Runs one call to DynamoDB. The one place where what it throws becomes a domain error: the
 * caller's outcomes first (a failed condition, a lost race), then `translateStoreError`.
 */
export async function storeCall<T>(call: () => Promise<T>, outcomes: Outcomes = {}): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const codes = cancellationCodes(error);
    const cancelled = codes ? outcomes.onCancelled?.(codes, error) : undefined;
    if (cancelled) throw cancelled;
    const failed = codes ? codes.indexOf('ConditionalCheckFailed') : isConditionFailure(error) ? 0 : -1;
    const mapped = failed >= 0 ? outcomes.onConditionFailed?.(failed) : undefined;
    if (mapped) throw mapped;
    if (outcomes.onTransactionConflict && isTransactionConflict(error))
      throw outcomes.onTransactionConflict();
    translateStoreError(error);
  }
}

/**
 * Thrown by a condition whose meaning depends on the item as it is now: the caller reads it again
 * to say why (gone, in use, or changed meanwhile).
 */
export class ConditionFailed extends Error {
  override name = 'ConditionFailed';
}

/**
 * Runs a single conditional write: true when it was written, false when its condition failed
 * (for callers that read the item again to say why, or for whom that is no error).
 */
export async function conditionalWrite(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await storeCall(call, { onConditionFailed: () => new ConditionFailed() });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}
