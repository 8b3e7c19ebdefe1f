import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '#auth/errors.ts';
import {
  AlreadyExistsError,
  CredentialRequiredError,
  DependencyConflictError,
  DomainError,
  type ErrorReason,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
  UnavailableError,
  VersionMismatchError,
} from '#domain/errors.ts';

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
  constructor(reason: ErrorReason, detail: string, issues?: Issue[]) {
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

/** One row of the error table: the status, its reason phrase and the headers the answer adds. */
interface StatusRow<E extends DomainError = DomainError> {
  status: number;
  message: string;
  headers?: (error: E) => Record<string, string>;
}

function row<E extends DomainError>(
  cls: abstract new (...args: never[]) => E,
  status: number,
  message: string,
  headers?: (error: E) => Record<string, string>,
): readonly [ErrorClass, StatusRow] {
  return [cls, { status, message, headers: headers as StatusRow['headers'] }];
}

/**
 * THE error → status table (DESIGN §5), with the headers each answer adds. Lambda errors
 * (`toErrorResponse`) and API Gateway's own answers (`gateway-responses.ts`) both read it.
 * Order matters only for subclasses listed before bases.
 */
const statusTable: ReadonlyArray<readonly [ErrorClass, StatusRow]> = [
  row(BadRequestError, 400, 'Bad Request'),
  row(InvalidInputError, 400, 'Bad Request'),
  row(UnauthenticatedError, 401, 'Unauthorized'),
  // The data plane's anonymous caller (RFC 9110 §11.6.1: a 401 names the schemes that would do).
  row(CredentialRequiredError, 401, 'Unauthorized', () => ({
    'WWW-Authenticate': 'Bearer realm="geoplane", ApiKey realm="geoplane", header="X-API-Key"',
  })),
  row(ForbiddenError, 403, 'Forbidden'),
  row(NotFoundError, 404, 'Not Found'),
  row(RouteNotFoundError, 404, 'Not Found'),
  row(AlreadyExistsError, 409, 'Conflict'),
  row(DependencyConflictError, 409, 'Conflict'),
  row(StateConflictError, 409, 'Conflict'),
  row(VersionMismatchError, 412, 'Precondition Failed'),
  row(PayloadTooLargeError, 413, 'Payload Too Large'),
  row(UnsupportedMediaTypeError, 415, 'Unsupported Media Type', (e) => ({ Accept: e.accept })),
  row(RuleViolationError, 422, 'Unprocessable Content'),
  row(HttpsRequiredError, 426, 'Upgrade Required', () => ({ Upgrade: 'TLS/1.2, HTTP/1.1' })),
  row(RateLimitedError, 429, 'Too Many Requests', (e) => ({ 'Retry-After': String(e.retryAfterSeconds) })),
  row(UnavailableError, 503, 'Service Unavailable', () => ({ 'Retry-After': '1' })),
];

/** The table's row of an error class (or of its nearest listed base class). */
export function statusOf(cls: ErrorClass): { status: number; message: string } {
  for (const [listed, { status, message }] of statusTable) {
    if (cls === listed || cls.prototype instanceof listed) return { status, message };
  }
  throw new Error(`${cls.name} has no row in the error table`);
}

/** The standard error body (DESIGN §5). */
export interface ErrorBody {
  code: number;
  message: string;
  detail: string;
  reason: ErrorReason;
  request_id: string;
  issues?: Issue[];
  [extra: string]: unknown;
}

/** An error answer: status, the standard body and the headers the table adds. */
export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** Maps any thrown value to a status and the standard body; unknown errors become a generic 500. */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  if (error instanceof DomainError) {
    for (const [cls, { status, message, headers }] of statusTable) {
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
        return { status, body, headers: headers?.(error) ?? {} };
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
    headers: {},
  };
}
