import { describe, expect, it } from 'vitest';
import { NotFoundError, UnavailableError } from '#domain/errors.ts';
import {
  HttpsRequiredError,
  RateLimitedError,
  statusOf,
  toErrorResponse,
  UnsupportedMediaTypeError,
} from '#http/errors.ts';
import { gatewayErrors } from '#http/gateway-responses.ts';

describe('the one error table', () => {
  it('gives API Gateway its own answers with the statuses and texts of the table', () => {
    const pick = (type: string, status: number, message: string, detail: string, reason: string) => ({
      type,
      status,
      message,
      detail,
      reason,
    });
    const unavailable = 'Credentials could not be checked right now; retry shortly.';
    expect(gatewayErrors).toEqual({
      unauthorized: pick(
        'UNAUTHORIZED',
        401,
        'Unauthorized',
        'A valid credential is required: send X-API-Key or Authorization: Bearer <token>.',
        'unauthenticated',
      ),
      accessDenied: pick(
        'ACCESS_DENIED',
        403,
        'Forbidden',
        'The credential is not allowed to call this operation.',
        'forbidden',
      ),
      routeNotFound: pick(
        'MISSING_AUTHENTICATION_TOKEN',
        404,
        'Not Found',
        'No operation of this API matches the method and path.',
        'route_not_found',
      ),
      tooLarge: pick(
        'REQUEST_TOO_LARGE',
        413,
        'Payload Too Large',
        'The request body exceeds the configured limit.',
        'body_too_large',
      ),
      throttled: {
        ...pick(
          'THROTTLED',
          429,
          'Too Many Requests',
          'Too many requests; retry after the number of seconds in Retry-After.',
          'rate_limited',
        ),
        retryAfterSeconds: 1,
      },
      quotaExceeded: {
        ...pick(
          'QUOTA_EXCEEDED',
          429,
          'Too Many Requests',
          'The usage quota is exhausted.',
          'quota_exceeded',
        ),
        retryAfterSeconds: 60,
      },
      usageKeyMissing: pick(
        'INVALID_API_KEY',
        503,
        'Service Unavailable',
        'The rate-limit key of this request is not available; retry shortly.',
        'usage_key_unavailable',
      ),
      authorizerFailure: pick(
        'AUTHORIZER_FAILURE',
        503,
        'Service Unavailable',
        unavailable,
        'auth_unavailable',
      ),
      authorizerConfiguration: pick(
        'AUTHORIZER_CONFIGURATION_ERROR',
        503,
        'Service Unavailable',
        unavailable,
        'auth_unavailable',
      ),
      default4xx: pick(
        'DEFAULT_4XX',
        400,
        'Bad Request',
        'The request was refused by the gateway.',
        'gateway_refused',
      ),
      default5xx: pick(
        'DEFAULT_5XX',
        503,
        'Service Unavailable',
        'The service is temporarily unavailable; retry shortly.',
        'unavailable',
      ),
    });
  });

  it('finds the row of a subclass through its base', () => {
    class GoneMissing extends NotFoundError {}
    expect(statusOf(GoneMissing)).toEqual({ status: 404, message: 'Not Found' });
  });

  it('adds the headers each status needs', () => {
    expect(toErrorResponse(new HttpsRequiredError(), 'r').headers).toEqual({ Upgrade: 'TLS/1.2, HTTP/1.1' });
    expect(toErrorResponse(new RateLimitedError(7), 'r').headers).toEqual({ 'Retry-After': '7' });
    expect(toErrorResponse(new UnavailableError('store_unavailable', 'x'), 'r').headers).toEqual({
      'Retry-After': '1',
    });
    expect(toErrorResponse(new UnsupportedMediaTypeError('x', 'application/json'), 'r').headers).toEqual({
      Accept: 'application/json',
    });
    expect(toErrorResponse(new Error('bug'), 'r')).toMatchObject({ status: 500, headers: {} });
  });
});
