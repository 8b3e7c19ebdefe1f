/**
 * The errors API Gateway answers by itself (no Lambda ran), reshaped into the standard body
 * (DESIGN §5). CDK turns these into gateway responses; the local host answers the same.
 */
export interface GatewayError {
  /** API Gateway's ResponseType. */
  type: string;
  status: number;
  message: string;
  detail: string;
  reason: string;
}

export const gatewayErrors = {
  unauthorized: {
    type: 'UNAUTHORIZED',
    status: 401,
    message: 'Unauthorized',
    detail: 'A valid credential is required: send X-API-Key or Authorization: Bearer <token>.',
    reason: 'unauthenticated',
  },
  accessDenied: {
    type: 'ACCESS_DENIED',
    status: 403,
    message: 'Forbidden',
    detail: 'The credential is not allowed to call this operation.',
    reason: 'forbidden',
  },
  routeNotFound: {
    // API Gateway answers an unknown path or method with MISSING_AUTHENTICATION_TOKEN (403).
    type: 'MISSING_AUTHENTICATION_TOKEN',
    status: 404,
    message: 'Not Found',
    detail: 'No operation of this API matches the method and path.',
    reason: 'route_not_found',
  },
  tooLarge: {
    type: 'REQUEST_TOO_LARGE',
    status: 413,
    message: 'Payload Too Large',
    detail: 'The request body exceeds the configured limit.',
    reason: 'body_too_large',
  },
  throttled: {
    type: 'THROTTLED',
    status: 429,
    message: 'Too Many Requests',
    detail: 'Too many requests; retry after the number of seconds in Retry-After.',
    reason: 'rate_limited',
  },
  quotaExceeded: {
    type: 'QUOTA_EXCEEDED',
    status: 429,
    message: 'Too Many Requests',
    detail: 'The usage quota is exhausted.',
    reason: 'quota_exceeded',
  },
  authorizerFailure: {
    type: 'AUTHORIZER_FAILURE',
    status: 503,
    message: 'Service Unavailable',
    detail: 'Credentials could not be checked right now; retry shortly.',
    reason: 'auth_unavailable',
  },
  authorizerConfiguration: {
    type: 'AUTHORIZER_CONFIGURATION_ERROR',
    status: 503,
    message: 'Service Unavailable',
    detail: 'Credentials could not be checked right now; retry shortly.',
    reason: 'auth_unavailable',
  },
  default4xx: {
    type: 'DEFAULT_4XX',
    status: 400,
    message: 'Bad Request',
    detail: 'The request was refused by the gateway.',
    reason: 'gateway_refused',
  },
  default5xx: {
    type: 'DEFAULT_5XX',
    status: 503,
    message: 'Service Unavailable',
    detail: 'The service is temporarily unavailable; retry shortly.',
    reason: 'unavailable',
  },
} as const satisfies Record<string, GatewayError>;

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
