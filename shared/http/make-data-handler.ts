/**
 * THE handler factory of the data plane (ADR 0123): one Lambda serves every entry of the data
 * route table. Per request: the route (by API Gateway's resource), HTTPS, the principal the
 * authorizer produced (none: anonymous), the path's parameters, the `{workspace}` (unknown → the
 * same 404 as a disabled protocol), the caller's role there with claim mappings applied, then the
 * operation's one use-case call. Answers carry an `ETag` (304 on `If-None-Match`) and a
 * `Cache-Control` that only lets shared caches keep what an anonymous caller got; errors are OGC
 * exception bodies (`{code, description}`) with the one error table's status and headers.
 */
import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { DataRoute } from '#api/data-routes.ts';
import { dataCaller } from '#auth/data-access.ts';
import { fromContext } from '#auth/principal.ts';
import { knownTargets } from '#auth/request-target.ts';
import { type AccessPorts, policyLoader, rolesInWorkspace } from '#auth/workspace-access.ts';
import { config } from '#config/env.ts';
import type { DataAnswer, DataRequest } from '#domain/data-plane.ts';
import { dictionary } from '#domain/dictionary.ts';
import { InvalidInputError, NotFoundError } from '#domain/errors.ts';
import { dataLinks } from '#domain/ogc-documents.ts';
import { resolveWorkspace } from '#domain/workspaces.ts';
import { errorFields, requestLogger } from '#log/logger.ts';
import { isThrottled, recordRequest } from '#telemetry/metrics.ts';
import { HttpsRequiredError, RouteNotFoundError, toErrorResponse } from './errors.ts';
import { securityHeaders } from './responses.ts';

/** The parsed path parameters of a route. */
export type DataParams = Record<string, string>;

/** One operation of the data plane: a single use-case call. */
export type DataOperationFn = (request: DataRequest, params: DataParams) => Promise<DataAnswer>;

/** The representations `f` may name; each use case narrows it to its own. */
const FORMATS = new Set(['json', 'geojson', 'tilejson', 'mapbox', 'mvt', 'oas30']);

function lowerHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const out = dictionary<string>();
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

function multiQuery(event: APIGatewayProxyEvent): Record<string, readonly string[]> {
  const out = dictionary<readonly string[]>();
  const multi = event.multiValueQueryStringParameters;
  if (multi) {
    for (const [k, v] of Object.entries(multi)) if (v) out[k] = v;
  } else {
    for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) if (v !== undefined) out[k] = [v];
  }
  return out;
}

function decodedParams(event: APIGatewayProxyEvent): Record<string, string> {
  const out = dictionary<string>();
  for (const [k, v] of Object.entries(event.pathParameters ?? {})) {
    if (v === undefined) continue;
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw new InvalidInputError(
        'invalid_parameter',
        `The path segment '${k}' is not valid percent-encoding.`,
        {
          parameter: k,
        },
      );
    }
  }
  return out;
}

/**
 * The absolute root of the workspace's OGC API as the client reached it: the configured public
 * origin (CloudFront on AWS), else the request's Host; on API Gateway's own domain the stage too.
 */
function apiRoot(
  event: APIGatewayProxyEvent,
  headers: Record<string, string>,
  workspaceParam: string,
): string {
  const configured = config().DATA_PLANE_ORIGIN;
  const host = headers.host ?? 'localhost';
  const origin = configured ? configured.replace(/\/+$/, '') : `https://${host}`;
  const domain = event.requestContext?.domainName ?? '';
  const stage = !configured && domain.endsWith('.amazonaws.com') ? `/${event.requestContext.stage}` : '';
  return `${origin}${stage}/workspaces/${encodeURIComponent(workspaceParam)}/ogc`;
}

function etagOf(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

/** The answer's bytes, headers and status (304 when the client holds it; 204 for an empty tile). */
function respond(
  answer: DataAnswer,
  anonymous: boolean,
  requestHeaders: Record<string, string>,
): APIGatewayProxyResult {
  const bytes =
    answer.kind === 'json'
      ? Buffer.from(JSON.stringify(answer.body))
      : Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  const etag = etagOf(bytes);
  // A shared cache may keep only what any caller would get: an anonymous caller's answer.
  const cacheControl = anonymous ? `public, max-age=${answer.cache.maxAge}` : 'private, no-cache';
  const headers: Record<string, string> = {
    ...securityHeaders,
    ...(answer.headers ?? {}),
    'Cache-Control': cacheControl,
    ETag: etag,
    ...(anonymous ? { 'Access-Control-Allow-Origin': '*' } : {}),
  };
  if (matches(requestHeaders['if-none-match'], etag)) return { statusCode: 304, headers, body: '' };
  if (answer.kind === 'bytes') {
    if (bytes.length === 0) return { statusCode: 204, headers, body: '' };
    return {
      statusCode: 200,
      headers: { ...headers, 'Content-Type': answer.mediaType },
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    };
  }
  return {
    statusCode: 200,
    headers: { ...headers, 'Content-Type': answer.mediaType },
    body: bytes.toString('utf8'),
  };
}

/** An error as an OGC API exception (`code`, `description`) with the one error table's status. */
function exception(error: unknown, requestId: string): APIGatewayProxyResult {
  const { status, body, headers } = toErrorResponse(error, requestId);
  const extra = (error as { extra?: Record<string, unknown> } | undefined)?.extra;
  return {
    statusCode: status,
    headers: { ...securityHeaders, ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      code: body.reason,
      description: body.detail,
      status,
      request_id: requestId,
      ...(extra && typeof extra.parameter === 'string' ? { parameter: extra.parameter } : {}),
    }),
  };
}

/** The one workspace the data plane answers for: unknown (or being deleted) → not served. */
const notServed = () => new NotFoundError('not_served', 'No OGC API is served at this address.');

/**
 * The data plane's Lambda handler over its route table and the operations by operationId; the
 * access ports (workspace lookup, claim mappings, custom roles' policies) as the management API's.
 */
export function makeDataHandler(
  routes: readonly DataRoute[],
  operations: Readonly<Record<string, DataOperationFn>>,
  accessPorts: () => AccessPorts,
) {
  const byResource = new Map(routes.map((r) => [r.path, r]));
  return async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const startedAt = performance.now();
    const requestId = event.requestContext?.requestId || context.awsRequestId || 'unknown';
    const route = byResource.get(event.resource);
    const operation = route?.operationId ?? 'unknownDataRoute';
    const log = requestLogger({ request_id: requestId, operation });
    let result: APIGatewayProxyResult;
    let failure: unknown;
    try {
      const fn = route ? operations[route.operationId] : undefined;
      if (!route || !fn) throw new RouteNotFoundError();
      const headers = lowerHeaders(event);
      const proto = headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
      if (proto === 'http') throw new HttpsRequiredError();
      const parsed = route.request.params?.safeParse(decodedParams(event));
      if (parsed && !parsed.success)
        throw new InvalidInputError('invalid_parameter', 'A path segment is empty or too long.');
      const params = (parsed?.data ?? {}) as DataParams;
      const query = multiQuery(event);
      const f = query.f;
      if (f && (f.length > 1 || !FORMATS.has(f[0] as string)))
        throw new InvalidInputError(
          'invalid_parameter',
          `f=${String(f[0]).slice(0, 32)} is not a representation of this API.`,
          {
            parameter: 'f',
          },
        );
      const authorizer = event.requestContext?.authorizer as Record<string, unknown> | undefined;
      const principal = fromContext(authorizer);
      if (principal?.id) log.appendPersistentKeys({ principal_id: principal.id });
      const access = accessPorts();
      const workspaceParam = params.workspace as string;
      const known = knownTargets(authorizer);
      const workspace = await resolveWorkspace(access.workspaces, workspaceParam, false, known.workspace);
      if (!workspace) throw notServed();
      log.appendPersistentKeys({ workspace_id: workspace.id });
      if (principal) principal.roles = await rolesInWorkspace(access, principal, workspace, known.claimRole);
      const caller = await dataCaller(principal, workspace, policyLoader(access));
      const links = dataLinks(apiRoot(event, headers, workspaceParam));
      const request: DataRequest = { workspace, caller, links, query };
      result = respond(await fn(request, params), caller.kind === 'anonymous', headers);
    } catch (error) {
      failure = error;
      result = exception(error, requestId);
      if (result.statusCode === 503)
        log.warn('dependency unavailable', { status: 503, ...errorFields(error) });
      else if (result.statusCode >= 500)
        log.error('request failed', { status: result.statusCode, ...errorFields(error) });
    }
    recordRequest({
      operation,
      status: result.statusCode,
      latencyMs: performance.now() - startedAt,
      throttled: isThrottled(failure),
    });
    return result;
  };
}
