import { DomainError } from '#domain/errors.ts';

/**
 * The errors of authentication and authorization. They carry no HTTP: `shared/http/errors.ts`
 * maps them in its one error → status table (401, 403, 429), as it maps the domain's errors.
 */

/** Missing or rejected credential (the same error whatever the cause). */
export class UnauthenticatedError extends DomainError {
  constructor() {
    super(
      'unauthenticated',
      'A valid credential is required: send X-API-Key or Authorization: Bearer <token>.',
    );
  }
}
/** Authenticated but not allowed (no role, missing permission, disabled login, failed CSRF). */
export class ForbiddenError extends DomainError {}
/** Over the request rate (failed logins of one address). */
export class RateLimitedError extends DomainError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('rate_limited', 'Too many requests; retry after the number of seconds in Retry-After.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
