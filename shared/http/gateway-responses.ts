import { UnavailableError } from '#domain/errors.ts';
import {
  BadRequestError,
  ForbiddenError,
  PayloadTooLargeError,
  RateLimitedError,
  RouteNotFoundError,
  statusOf,
  UnauthenticatedError,
} from './errors.ts';

/**
 * The errors API Gateway answers by itself (no Lambda ran), reshaped into the standard body
 * (DESIGN §5). CDK turns these into gateway responses; the local host answers the same. Status
 * and message come from the one error table (`errors.ts`); the texts are the errors' own where
 * one exists.
 */
export interface GatewayError {
  /** API Gateway's ResponseType. */
  type: string;
  status: number;
  message: string;
  detail: string;
  reason: string;
  /** The static Retry-After of a throttling answer, in seconds. */
  retryAfterSeconds?: number;
}

type ErrorClass = Parameters<typeof statusOf>[0];

/** A gateway error answered as the table answers `cls`, with its own reason and detail. */
function answeredAs(type: string, cls: ErrorClass, reason: string, detail: string): GatewayError {
  return { type, ...statusOf(cls), detail, reason };
}

/** A gateway error answered exactly as the table answers `error`. */
function answeredLike(type: string, error: InstanceType<ErrorClass>): GatewayError {
  return answeredAs(type, error.constructor as ErrorClass, error.reason, error.message);
}

const authUnavailable = 'Credentials could not be checked right now; retry shortly.';

export const gatewayErrors = {
  unauthorized: answeredLike('UNAUTHORIZED', new UnauthenticatedError()),
  accessDenied: answeredAs(
    'ACCESS_DENIED',
    ForbiddenError,
    'forbidden',
    'The credential is not allowed to call this operation.',
  ),
  // API Gateway answers an unknown path or method with MISSING_AUTHENTICATION_TOKEN (403).
  routeNotFound: answeredLike('MISSING_AUTHENTICATION_TOKEN', new RouteNotFoundError()),
  tooLarge: answeredAs(
    'REQUEST_TOO_LARGE',
    PayloadTooLargeError,
    'body_too_large',
    'The request body exceeds the configured limit.',
  ),
  throttled: { ...answeredLike('THROTTLED', new RateLimitedError(1)), retryAfterSeconds: 1 },
  quotaExceeded: {
    ...answeredAs('QUOTA_EXCEEDED', RateLimitedError, 'quota_exceeded', 'The usage quota is exhausted.'),
    retryAfterSeconds: 60,
  },
  // A method that requires a usage key got none from the authorizer, or one in no usage plan: the
  // deployment's fault (a key of the pool deleted by hand), never the client's (ADR 0111).
  usageKeyMissing: answeredAs(
    'INVALID_API_KEY',
    UnavailableError,
    'usage_key_unavailable',
    'The rate-limit key of this request is not available; retry shortly.',
  ),
  authorizerFailure: answeredAs('AUTHORIZER_FAILURE', UnavailableError, 'auth_unavailable', authUnavailable),
  authorizerConfiguration: answeredAs(
    'AUTHORIZER_CONFIGURATION_ERROR',
    UnavailableError,
    'auth_unavailable',
    authUnavailable,
  ),
  default4xx: answeredAs(
    'DEFAULT_4XX',
    BadRequestError,
    'gateway_refused',
    'The request was refused by the gateway.',
  ),
  default5xx: answeredAs(
    'DEFAULT_5XX',
    UnavailableError,
    'unavailable',
    'The service is temporarily unavailable; retry shortly.',
  ),
} satisfies Record<string, GatewayError>;

/** The body of a gateway error for a request id. */
export function gatewayErrorBody(error: GatewayError, requestId: string) {
  return {
    code: error.status,
    message: error.message,
    detail: error.detail,
    reason: error.reason,
    request_id: requestId,
  };
}
