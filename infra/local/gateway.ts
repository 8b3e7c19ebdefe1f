import { randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { dataRoutes } from '#api/data-routes.ts';
import type { Operation } from '#api/operation.ts';
import { isBinaryMediaType, LAMBDA_INVOKE_PAYLOAD_BYTES } from '#api/payload-limits.ts';
import { authorizerDataAccess, dataAccessOf, routes } from '#api/routes.ts';
import { dictionary } from '#domain/dictionary.ts';
import { HttpsRequiredError, toErrorResponse } from '#http/errors.ts';
import { type GatewayError, gatewayErrorBody, gatewayErrors } from '#http/gateway-responses.ts';
import { securityHeaders } from '#http/responses.ts';
import { errorFields, logger } from '#log/logger.ts';
import { REQUEST_ID_HEADER } from './access-log.ts';
import { withDataAccess } from './data-access.ts';
import { listLocalEvents } from './event-feed.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REGION = 'local';
const ACCOUNT = '000000000000';
const API_ID = 'local';
const STAGE = 'v1';

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

/** A request as the local HTTPS host received it. */
export interface IncomingRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  sourceIp: string;
}

/** What the host writes back. */
export interface OutgoingResponse {
  statusCode: number;
  headers: Record<string, string | string[]>;
  /** Bytes when the Lambda answered base64 (`isBase64Encoded`), as API Gateway decodes them. */
  body: string | Buffer;
}

interface CompiledRoute {
  op: Operation;
  pattern: RegExp;
  names: string[];
}

// The route tables (management and data plane), and the local host's own feed of catalog events
// (ADR 0094; never deployed).
const compiled: CompiledRoute[] = [...routes, ...dataRoutes, listLocalEvents]
  .map((op) => {
    const names: string[] = [];
    const source = op.path.replace(/[.]/g, '\\.').replace(/\{([^}]+)\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { op, pattern: new RegExp(`^${source}$`), names };
  })
  // Literal segments win over parameters, as in API Gateway.
  .sort((a, b) => a.names.length - b.names.length);

const modules = new Map<string, Promise<{ handler: LambdaHandler<unknown, unknown> }>>();
function load(path: string) {
  let mod = modules.get(path);
  if (!mod) {
    mod = import(pathToFileURL(resolve(root, path)).href) as Promise<{
      handler: LambdaHandler<unknown, unknown>;
    }>;
    modules.set(path, mod);
  }
  return mod;
}

function lambdaContext(requestId: string, functionName: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** API Gateway's own answer for one of its errors (status and body from the shared table). */
export function gatewayError(
  error: GatewayError,
  requestId: string,
  extra: Record<string, string> = {},
): OutgoingResponse {
  return {
    statusCode: error.status,
    headers: {
      ...securityHeaders,
      'Content-Type': 'application/json',
      ...extra,
      [REQUEST_ID_HEADER]: requestId,
    },
    body: JSON.stringify(gatewayErrorBody(error, requestId)),
  };
}

/** The answer to a request that is not valid HTTP, or whose target no URL parser takes (400). */
export const malformedRequest: GatewayError = {
  ...gatewayErrors.default4xx,
  detail: 'The request is not valid HTTP.',
  reason: 'malformed_request',
};

/** The request's URL, or undefined when its target is not one (`http://[`, a port past 65535). */
function parseTarget(target: string): URL | undefined {
  try {
    return new URL(target, 'https://127.0.0.1');
  } catch {
    return undefined;
  }
}

/** Whether a request target parses as a URL (the host answers `malformedRequest` to any other). */
export function isParsableTarget(target: string): boolean {
  return parseTarget(target) !== undefined;
}

/** Does an IAM resource pattern (with `*` and `?`) match the ARN? */
function arnMatches(pattern: string, arn: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(arn);
}

/** Evaluates an authorizer policy the way API Gateway does: an explicit Deny wins, else an Allow is needed. */
export function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  let allowed = false;
  for (const statement of result.policyDocument?.Statement ?? []) {
    const s = statement as { Effect: string; Action?: string | string[]; Resource?: string | string[] };
    const actions = ([] as string[]).concat(s.Action ?? []);
    if (!actions.some((a) => a === '*' || a === 'execute-api:*' || a === 'execute-api:Invoke')) continue;
    const resources = ([] as string[]).concat(s.Resource ?? []);
    if (!resources.some((r) => arnMatches(r, methodArn))) continue;
    if (s.Effect === 'Deny') return false;
    if (s.Effect === 'Allow') allowed = true;
  }
  return allowed;
}

function singleValued(multi: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v[v.length - 1] as string]));
}

/** The bytes as UTF-8 text, or undefined when they are not UTF-8. */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Hooks the host can give the gateway (rate limiting). */
export interface GatewayOptions {
  /**
   * Seconds to wait when the usage key is over its usage plan's rate, else 0: the per-workspace
   * limit, checked first, as API Gateway does (ADR 0111).
   */
  throttle?: (usageKey: string) => number;
  /**
   * Seconds to wait when the method is over the stage's method throttle (all clients together,
   * the deployment's ceiling), else 0; checked after the usage plan's, public methods too.
   */
  methodThrottle?: (operationId: string) => number;
  /** Hard ceiling on body bytes the gateway accepts (API Gateway's own limit is 10 MB). */
  maxGatewayBodyBytes: number;
}

/**
 * Emulates API Gateway REST v1: route match, REQUEST authorizer with policy evaluation, the
 * Lambda proxy event, and gateway responses for its own errors.
 */
export async function handleRequest(
  req: IncomingRequest,
  options: GatewayOptions,
): Promise<OutgoingResponse> {
  const requestId = randomUUID();
  const url = parseTarget(req.url);
  if (!url) return gatewayError(malformedRequest, requestId);
  const method = req.method.toUpperCase();
  let match: { route: CompiledRoute; values: string[] } | undefined;
  for (const route of compiled) {
    if (route.op.method !== method) continue;
    const m = route.pattern.exec(url.pathname);
    if (m) {
      match = { route, values: m.slice(1) };
      break;
    }
  }
  if (!match) return gatewayError(gatewayErrors.routeNotFound, requestId);
  if (req.body.length > options.maxGatewayBodyBytes) return gatewayError(gatewayErrors.tooLarge, requestId);

  const { op } = match.route;
  // Header and query names are client data: prototype-free tables (`?constructor=1` is a name, ADR 0075).
  const multiHeaders = dictionary<string[]>();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    multiHeaders[k] = Array.isArray(v) ? v : [v];
  }
  const headers = singleValued(multiHeaders);
  const multiQuery = dictionary<string[]>();
  for (const [k, v] of url.searchParams) multiQuery[k] = [...(multiQuery[k] ?? []), v];
  const pathParameters = Object.fromEntries(match.route.names.map((n, i) => [n, match.values[i] as string]));
  const methodArn = `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/${STAGE}/${method}${url.pathname}`;

  let authorizer: Record<string, unknown> | undefined;
  if (op.permission !== 'public') {
    const authEvent: APIGatewayRequestAuthorizerEvent = {
      type: 'REQUEST',
      methodArn,
      resource: op.path,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders: multiHeaders,
      pathParameters,
      queryStringParameters: Object.keys(multiQuery).length ? singleValued(multiQuery) : null,
      multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
      stageVariables: null,
      requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
    };
    let result: APIGatewayAuthorizerResult;
    try {
      const { handler } = await load('functions/authorizer/index.ts');
      result = (await withDataAccess('authorizer', authorizerDataAccess, () =>
        Promise.resolve(handler(authEvent, lambdaContext(requestId, 'authorizer'))),
      )) as APIGatewayAuthorizerResult;
    } catch (error) {
      if ((error as Error).message === 'Unauthorized')
        return gatewayError(gatewayErrors.unauthorized, requestId);
      logger.error('authorizer failed', { request_id: requestId, ...errorFields(error) });
      return gatewayError(gatewayErrors.authorizerFailure, requestId);
    }
    if (!policyAllows(result, methodArn)) return gatewayError(gatewayErrors.accessDenied, requestId);
    authorizer = { ...(result.context ?? {}), principalId: result.principalId };
    // The bucket API Gateway's usage plan uses: the authorizer's usageIdentifierKey and nothing
    // else. Without one, a method that requires a key is refused (ADR 0111).
    const usageKey = result.usageIdentifierKey;
    if (!usageKey) return gatewayError(gatewayErrors.usageKeyMissing, requestId);
    const wait = options.throttle?.(usageKey) ?? 0;
    if (wait > 0) return gatewayError(gatewayErrors.throttled, requestId, { 'Retry-After': String(wait) });
  }
  const methodWait = options.methodThrottle?.(op.operationId) ?? 0;
  if (methodWait > 0)
    return gatewayError(gatewayErrors.throttled, requestId, { 'Retry-After': String(methodWait) });

  let body: string | null = null;
  let isBase64Encoded = false;
  if (req.body.length > 0) {
    // A binary media type travels base64-encoded, as API Gateway passes it (ADR 0116); bytes that
    // aren't UTF-8 too (API Gateway would mangle them; the host keeps them).
    const contentType = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
    const text = isBinaryMediaType(contentType) ? undefined : utf8(req.body);
    body = text ?? req.body.toString('base64');
    isBase64Encoded = text === undefined;
  }
  const event: APIGatewayProxyEvent = {
    resource: op.path,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders: multiHeaders,
    queryStringParameters: Object.keys(multiQuery).length ? singleValued(multiQuery) : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    body,
    isBase64Encoded,
    requestContext: {
      accountId: ACCOUNT,
      apiId: API_ID,
      authorizer: authorizer ?? null,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: { sourceIp: req.sourceIp } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/${STAGE}${url.pathname}`,
      stage: STAGE,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: op.operationId,
      resourcePath: op.path,
    },
  };
  // Lambda refuses an invoke payload over 6 MB before the function runs; API Gateway answers 413 (ADR 0116).
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_INVOKE_PAYLOAD_BYTES) {
    return gatewayError(gatewayErrors.tooLarge, requestId);
  }
  try {
    const { handler } = await load(op.handler);
    const result = (await withDataAccess(op.operationId, dataAccessOf(op), () =>
      Promise.resolve(handler(event, lambdaContext(requestId, op.operationId))),
    )) as APIGatewayProxyResult;
    const outHeaders: Record<string, string | string[]> = { [REQUEST_ID_HEADER]: requestId };
    for (const [k, v] of Object.entries(result.headers ?? {})) outHeaders[k] = String(v);
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) outHeaders[k] = v.map(String);
    const body = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? '');
    return { statusCode: result.statusCode, headers: outHeaders, body };
  } catch (error) {
    // A Lambda that throws out of makeHandler is a bug: API Gateway answers 502, reshaped as 5XX.
    logger.error('handler threw', {
      request_id: requestId,
      operation: op.operationId,
      ...errorFields(error),
    });
    return gatewayError(gatewayErrors.default5xx, requestId);
  }
}

/** The 426 answer of the plain HTTP port: the error table's answer to HttpsRequiredError. */
export function httpsRequired(): OutgoingResponse {
  const requestId = randomUUID();
  const { status, body, headers } = toErrorResponse(new HttpsRequiredError(), requestId);
  return {
    statusCode: status,
    headers: {
      ...securityHeaders,
      'Content-Type': 'application/json',
      ...headers,
      Connection: 'Upgrade',
      [REQUEST_ID_HEADER]: requestId,
    },
    body: JSON.stringify(body),
  };
}
