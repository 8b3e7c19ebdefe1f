/** What an operation function returns; makeHandler turns it into the API Gateway result. */
export interface HandlerResult {
  statusCode: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Set-Cookie values (sent as multi-value headers). */
  cookies?: string[];
}

function etagOf(body: unknown): Record<string, string> {
  const version = (body as { version?: unknown } | undefined)?.version;
  return typeof version === 'number' ? { ETag: `"${version}"` } : {};
}

/** 200 with a JSON body (ETag from `version` when present). */
export function ok(body: unknown, headers: Record<string, string> = {}): HandlerResult {
  return { statusCode: 200, body, headers: { ...etagOf(body), ...headers } };
}

/** 201 with a JSON body and the new resource's Location (an explicit ETag wins over `version`'s). */
export function created(
  body: unknown,
  location: string,
  headers: Record<string, string> = {},
): HandlerResult {
  return { statusCode: 201, body, headers: { ...etagOf(body), ...headers, Location: location } };
}

/** 201 for a new session: the body and the Set-Cookie values, no Location (the session is the cookie). */
export function sessionCreated(body: unknown, cookies: string[]): HandlerResult {
  return { statusCode: 201, body, cookies };
}

/** 202 with the operation body and the Location of its status resource. */
export function accepted(body: unknown, location: string): HandlerResult {
  return { statusCode: 202, body, headers: { Location: location } };
}

/** 304 for a conditional GET whose `If-None-Match` holds the current ETag. */
export function notModified(etag: string): HandlerResult {
  return { statusCode: 304, headers: { ETag: etag } };
}

/** 204 without a body. */
export function noContent(): HandlerResult {
  return { statusCode: 204 };
}

/** Headers on every response of the API. */
export const securityHeaders: Readonly<Record<string, string>> = {
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  Vary: 'Authorization, X-API-Key, Cookie',
};
