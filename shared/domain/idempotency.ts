/** Who sent a POST, to which operation, with which `Idempotency-Key`: one record (ADR 0088). */
export interface IdempotencyScope {
  /**
   * The principal's stable id (`apikey:<id>`, `jwt:<sub>`): a stored answer is replayed to this
   * caller only. Requests without a principal (public routes) keep no record (ADR 0109).
   */
  principalId: string;
  operationId: string;
  /** The client's `Idempotency-Key` header, verbatim. */
  key: string;
}

/** A live record as the store holds it: a first request still running, or its stored answer. */
export type IdempotencyRecord =
  | { status: 'in_progress'; fingerprint: string }
  | { status: 'completed'; fingerprint: string; response: string };

/** Port: the idempotency records (one item each, in the single table). */
export interface IdempotencyStore {
  /**
   * Makes this request the first one of `scope`: writes an in-progress record owned by `claimId`
   * unless a live one exists (completed and not past `expires_at`, or in progress and not past its
   * in-progress deadline). Returns undefined when claimed, the live record otherwise.
   */
  claim(
    scope: IdempotencyScope,
    claim: { claimId: string; fingerprint: string; nowMs: number; inProgressUntilMs: number },
  ): Promise<IdempotencyRecord | undefined>;
  /** Stores the sealed answer of the claim and keeps it until `expiresAtEpoch`; false when the claim was lost. */
  complete(
    scope: IdempotencyScope,
    claimId: string,
    response: string,
    expiresAtEpoch: number,
  ): Promise<boolean>;
  /** Deletes the claim's in-progress record (the first request failed: a retry may run again). */
  release(scope: IdempotencyScope, claimId: string): Promise<void>;
}
