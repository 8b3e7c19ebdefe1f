import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '../auth/errors.ts';
import {
  AlreadyExistsError,
  DependencyConflictError,
  DomainError,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
  UnavailableError,
  VersionMismatchError,
} from '../domain/errors.ts';

// Authentication's errors live in auth (auth never imports http); they are mapped below.
export { ForbiddenError, RateLimitedError, UnauthenticatedError };

/** One `{path, message}` entry of a validation failure. */
export interface Issue {
  path: string;
  message: string;
}

/** Errors that only exist at the HTTP edge (transport, parsing, routing). */
export abstract class HttpEdgeError extends DomainError {}
/** Malformed JSON or a schema violation. */
export class BadRequestError extends HttpEdgeError {
  readonly issues?: Issue[];
  constructor(reason: string, detail: string, issues?: Issue[]) {
    super(reason, detail);
    this.issues = issues;
  }
}
/** Request body larger than the configured limit. */
export class PayloadTooLargeError extends HttpEdgeError {}
/** A request body in a media type the route does not take (ADR 0075). */
export class UnsupportedMediaTypeError extends HttpEdgeError {
  /** The media types the route takes, for the `Accept` header of the answer. */
  readonly accept: string;
  constructor(detail: string, accept: string) {
    super('unsupported_media_type', detail);
    this.accept = accept;
  }
}
/** Plain HTTP refused. */
export class HttpsRequiredError extends HttpEdgeError {
  constructor() {
    super('https_required', 'This API is only served over HTTPS.');
  }
}
/** No route for this method and path. */
export class RouteNotFoundError extends HttpEdgeError {
  constructor() {
    super('route_not_found', 'No operation of this API matches the method and path.');
  }
}

type ErrorClass = abstract new (...args: never[]) => DomainError;

/** THE error → status table (DESIGN §5). Order matters only for subclasses listed before bases. */
const statusTable: ReadonlyArray<readonly [ErrorClass, number, string]> = [
  [BadRequestError, 400, 'Bad Request'],
  [InvalidInputError, 400, 'Bad Request'],
  [UnauthenticatedError, 401, 'Unauthorized'],
  [ForbiddenError, 403, 'Forbidden'],
  [NotFoundError, 404, 'Not Found'],
  [RouteNotFoundError, 404, 'Not Found'],
  [AlreadyExistsError, 409, 'Conflict'],
  [DependencyConflictError, 409, 'Conflict'],
  [StateConflictError, 409, 'Conflict'],
  [VersionMismatchError, 412, 'Precondition Failed'],
  [PayloadTooLargeError, 413, 'Payload Too Large'],
  [UnsupportedMediaTypeError, 415, 'Unsupported Media Type'],
  [RuleViolationError, 422, 'Unprocessable Content'],
  [HttpsRequiredError, 426, 'Upgrade Required'],
  [RateLimitedError, 429, 'Too Many Requests'],
  [UnavailableError, 503, 'Service Unavailable'],
];

/** The standard error body (DESIGN §5). */
export interface ErrorBody {
  code: number;
  message: string;
  detail: string;
  reason: string;
  request_id: string;
  issues?: Issue[];
  [extra: string]: unknown;
}

/** Maps any thrown value to a status and the standard body; unknown errors become a generic 500. */
export function toErrorResponse(error: unknown, requestId: string): { status: number; body: ErrorBody } {
  if (error instanceof DomainError) {
    for (const [cls, status, message] of statusTable) {
      if (error instanceof cls) {
        const body: ErrorBody = {
          ...error.extra,
          code: status,
          message,
          detail: error.message,
          reason: error.reason,
          request_id: requestId,
        };
        if (error instanceof BadRequestError && error.issues) body.issues = error.issues;
        return { status, body };
      }
    }
  }
  return {
    status: 500,
    body: {
      code: 500,
      message: 'Internal Server Error',
      detail: 'An unexpected error occurred; it has been logged with the request id.',
      reason: 'internal_error',
      request_id: requestId,
    },
  };
}

/** Builds an error body directly from a status (used by gateway-style responses). */
export function errorBody(
  code: number,
  message: string,
  detail: string,
  reason: string,
  requestId: string,
): ErrorBody {
  return { code, message, detail, reason, request_id: requestId };
}
