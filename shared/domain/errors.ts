import type { ErrorReason } from './error-reasons.ts';

export type { ErrorReason } from './error-reasons.ts';

/**
 * Domain errors: what went wrong in business terms. They carry no HTTP; `shared/http/errors.ts`
 * maps each class to a status in one table.
 */
export abstract class DomainError extends Error {
  /** Stable snake_case machine code, returned as `reason` (one of ERROR_REASONS). */
  readonly reason: ErrorReason;
  /** Extra fields merged into the error body (e.g. a deletion plan). */
  readonly extra?: Record<string, unknown>;

  /** `options.cause`: what went wrong underneath (logged, never answered; ADR 0090). */
  constructor(
    reason: ErrorReason,
    detail: string,
    extra?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = new.target.name;
    this.reason = reason;
    this.extra = extra;
  }
}

/** The addressed resource does not exist (or is hidden from the caller). */
export class NotFoundError extends DomainError {}
/** A unique name or id is already taken. */
export class AlreadyExistsError extends DomainError {}
/** Other resources still depend on the target. */
export class DependencyConflictError extends DomainError {}
/** The resource's state refuses the transition. */
export class StateConflictError extends DomainError {}
/** The request is well-formed but semantically impossible. */
export class RuleViolationError extends DomainError {}
/** The request is well-formed but one of its values is invalid for this resource (400). */
export class InvalidInputError extends DomainError {}
/** A dependency (DynamoDB, a data source) is unavailable. */
export class UnavailableError extends DomainError {}
/** The `If-Match` precondition failed. */
export class VersionMismatchError extends DomainError {}

/**
 * Reasons of the 422 an import's plan gets when it is over a limit (ADR 0110): one import's
 * layers, rows (features) or file bytes, or the rows and bytes of all the workspace's imports.
 */
export const IMPORT_LIMIT_REASONS = [
  'import_layer_limit',
  'import_row_limit',
  'import_byte_limit',
  'workspace_import_quota',
] as const;
/**
 * The data plane needs a credential for this (ADR 0120): an anonymous request for anything not
 * public. 401 with `WWW-Authenticate`; a rejected credential never gets here (the authorizer).
 */
export class CredentialRequiredError extends DomainError {
  constructor() {
    super(
      'credential_required',
      'A credential is required: send X-API-Key, Authorization: Bearer <token>, or a console session.',
    );
  }
}
