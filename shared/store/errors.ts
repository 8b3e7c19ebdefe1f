import { UnavailableError } from '../domain/errors.ts';

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

/**
 * Translates persistence failures that are not condition failures: throttling, timeouts,
 * refused connections and a missing table are outages (503); anything else is rethrown as a bug.
 */
export function translateStoreError(error: unknown): never {
  const e = error as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
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
    throw new UnavailableError(
      'store_unavailable',
      'The catalog store is temporarily unavailable; retry shortly.',
    );
  }
  throw error;
}
