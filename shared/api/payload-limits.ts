/**
 * Lambda's synchronous invoke payload limit, in bytes: it applies to the whole API Gateway proxy
 * event as JSON (headers, context and the body), not to the body alone (ADR 0116).
 */
export const LAMBDA_INVOKE_PAYLOAD_BYTES = 6_291_456;

/**
 * Room kept in the event for everything but the body (ADR 0116): headers (at most 10,240 bytes on a
 * REST API, carried twice: `headers` and `multiValueHeaders`), the query string (twice too), the
 * authorizer's context (at most 8 KB) and the request context, each possibly JSON-escaped.
 */
export const PROXY_EVENT_HEADROOM_BYTES = 262_144;

/**
 * The largest body that still reaches the function when API Gateway passes it base64-encoded:
 * floor((6,291,456 − 262,144) × 3 / 4) = 4,521,984 bytes (its base64 is 6,029,312 bytes). A raw
 * (`rawBody`) operation or a base64 body is capped here whatever `maxBodyBytes` says (ADR 0116).
 */
export const MAX_BINARY_BODY_BYTES = Math.floor(
  ((LAMBDA_INVOKE_PAYLOAD_BYTES - PROXY_EVENT_HEADROOM_BYTES) * 3) / 4,
);

/**
 * The REST API's binary media types: a request body with such a Content-Type reaches the function
 * base64-encoded (`isBase64Encoded`). CDK deploys this list and the local host applies it. On the
 * way back API Gateway decodes a base64 answer only when the request's first `Accept` is one of
 * them: the data plane's vector tiles (ADR 0122; the distribution sets that `Accept` on tile paths).
 */
export const BINARY_MEDIA_TYPES: readonly string[] = [
  'image/*',
  'application/octet-stream',
  'application/vnd.mapbox-vector-tile',
];

/** True when API Gateway passes a body of this Content-Type base64-encoded (a binary media type). */
export function isBinaryMediaType(contentType: string | undefined): boolean {
  // The media type before any parameter, as sent (a malformed one is matched loosely, not refused).
  const [type = '', subtype = ''] = (contentType ?? '').split(';')[0]?.trim().toLowerCase().split('/') ?? [];
  if (type === '' || subtype === '') return false;
  return BINARY_MEDIA_TYPES.some((pattern) => {
    const [t, s] = pattern.split('/');
    return type === t && (s === '*' || subtype === s);
  });
}

/**
 * The body limit of an operation (413 above it): its own `maxBodyBytes`, the stage's
 * MAX_BODY_BYTES, and for raw bytes or a base64 body the most that fits Lambda's invoke payload.
 */
export function bodyLimitOf(
  op: { maxBodyBytes?: number; rawBody?: true },
  configured: number,
  base64: boolean,
): number {
  const own = Math.min(op.maxBodyBytes ?? Number.POSITIVE_INFINITY, configured);
  return op.rawBody || base64 ? Math.min(own, MAX_BINARY_BODY_BYTES) : own;
}
