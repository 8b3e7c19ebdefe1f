import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { acceptsContentType, JSON_MEDIA_TYPES } from '#api/content-types.ts';
import type { InputOf, Operation, Schema } from '#api/operation.ts';
import { bodyLimitOf } from '#api/payload-limits.ts';
import { authorize } from '#auth/permissions.ts';
import { fromContext, type Principal } from '#auth/principal.ts';
import { knownTargets } from '#auth/request-target.ts';
import { type AccessPorts, policyLoader, rolesInWorkspace } from '#auth/workspace-access.ts';
import { config } from '#config/env.ts';
import type { RefusalLog } from '#domain/audit.ts';
import { dictionary } from '#domain/dictionary.ts';
import { NotFoundError, UnavailableError } from '#domain/errors.ts';
import { type KnownService, requireService, type Service } from '#domain/services.ts';
import { resolveWorkspace, type Workspace } from '#domain/workspaces.ts';
import { errorFields, type RequestLog, requestLogger } from '#log/logger.ts';
import { isThrottled, recordRequest } from '#telemetry/metrics.ts';
import { type RequestTrace, traceRequest } from '#telemetry/tracer.ts';
import {
  BadRequestError,
  ForbiddenError,
  HttpsRequiredError,
  type Issue,
  PayloadTooLargeError,
  toErrorResponse,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
} from './errors.ts';
import {
  abandonIdempotent,
  finishIdempotent,
  type IdempotencyClaim,
  type IdempotencyPorts,
  idempotencyKeyOf,
  requestFingerprint,
  startIdempotent,
} from './idempotency.ts';
import { type HandlerResult, securityHeaders } from './responses.ts';

// zod/mini ships no messages; load the English ones so `issues` explain themselves.
z.config(en());

/** The validated request an operation function receives. */
export interface HandlerRequest<Op extends Operation> {
  params: InputOf<Op['request']['params']>;
  query: InputOf<Op['request']['query']>;
  body: InputOf<Op['request']['body']>;
  /** The caller; an anonymous principal on public routes. */
  principal: Principal;
  /** The resolved `{workspace}` of workspace routes (throws on routes without one). */
  workspace: Workspace;
  /**
   * The resolved `{service}` of service routes (throws on routes without one): active, or also
   * being deleted where the operation says so. Reads take the one the authorizer carried (its
   * password withheld); changes read it afresh (ADR 0099).
   */
  service: Service;
  ifMatch?: string;
  requestId: string;
  /** The client address as API Gateway saw it. */
  sourceIp: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The body's bytes, on operations declared with `rawBody` (empty when there is none). */
  rawBody?: Buffer;
}

type Event = APIGatewayProxyEvent;
type Middleware = MiddlewareObj<Event, APIGatewayProxyResult, Error, Context>;
type Request = Parameters<NonNullable<Middleware['before']>>[0];

/**
 * What the middlewares learn about one request, in DESIGN §4 order: `requestState` starts it on a
 * context of this invocation's own, each step adds its part, the operation function gets `input`.
 */
interface RequestState {
  /** Request headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** The body as API Gateway passed it (base64 when `isBase64Encoded`). */
  readonly raw: string;
  /** This request's logger: request id and operation, then principal and workspace once known (ADR 0090). */
  readonly log: RequestLog;
  /** The caller once authenticated; anonymous on public routes. */
  principal: Principal;
  /** The resolved workspace's id, once known (logs, traces, a refusal's audit record; ADR 0090, 0092, 0094). */
  workspaceId?: string;
  /** This request's X-Ray subsegment where tracing is on (ADR 0092). */
  trace?: RequestTrace;
  /** When `measured` started timing the request (performance.now()). */
  startedAt?: number;
  /** Set once the request's metrics are written (they are written once). */
  measured?: boolean;
  /** The parsed JSON body, on routes that take one. */
  json?: unknown;
  /** The validated request; its `workspace` is set by `workspaceAccess`, its `service` by `serviceAccess`. */
  input?: HandlerRequest<Operation>;
  /** The `{service}` as the authorizer read it with the credential (ADR 0099), when it did. */
  knownService?: KnownService;
  /** This request's claim on its Idempotency-Key (ADR 0088). */
  claim?: IdempotencyClaim;
  /** The stored first answer to replay instead of running the operation again. */
  replay?: APIGatewayProxyResult;
}

type StatefulContext = Context & { readonly request: RequestState };

/** The reason of the 403 for a caller without a role in a workspace, existing or not (DESIGN §5). */
const NO_WORKSPACE_ACCESS = 'no_workspace_access';

function stateOf(context: Context): RequestState {
  const state = (context as Partial<StatefulContext>).request;
  if (!state) throw new Error('request was not prepared');
  return state;
}

const anonymous: Principal = {
  id: '',
  subject: '',
  authMethod: 'apikey',
  superAdmin: false,
  roles: {},
};

function lowerHeaders(event: Event): Record<string, string> {
  const out = dictionary<string>();
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

function bodyBytes(event: Event, raw: string): Buffer {
  return Buffer.from(raw, event.isBase64Encoded ? 'base64' : 'utf8');
}

/**
 * Refuses a body the route can't take (415, ADR 0075): a JSON route needs `application/json` or
 * `application/<x>+json`, charset utf-8 only. A body without a Content-Type is refused too; a
 * request with neither body nor Content-Type falls through to `body_required` (400).
 */
function checkContentType(op: Operation, event: Event, headers: Record<string, string>, raw: string): void {
  const declared = headers['content-type'];
  if (raw === '' && (declared === undefined || declared.trim() === '')) return;
  // Two Content-Type headers are no declaration at all (API Gateway would pass only the last).
  const all = Object.entries(event.multiValueHeaders ?? {}).flatMap(([k, v]) =>
    k.toLowerCase() === 'content-type' ? (v ?? []) : [],
  );
  const contentType = new Set(all).size > 1 ? undefined : declared;
  if (acceptsContentType(op, contentType)) return;
  const shown =
    contentType === undefined || contentType.trim() === '' ? 'none' : `'${contentType.slice(0, 100)}'`;
  throw new UnsupportedMediaTypeError(
    `${op.operationId} takes a JSON body: Content-Type application/json or application/<x>+json, charset utf-8 only (got ${shown}).`,
    JSON_MEDIA_TYPES,
  );
}

function requestIdOf(event: Event, context: Context): string {
  return event.requestContext?.requestId || context.awsRequestId || 'unknown';
}

function issuesOf(
  location: string,
  error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> },
): Issue[] {
  return error.issues.map((i) => ({
    path: [location, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
}

function parse(schema: Schema | undefined, value: unknown, location: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new BadRequestError(
      'validation_failed',
      `The request ${location} is invalid.`,
      issuesOf(location, result.error),
    );
  }
  return result.data;
}

function decodeParams(params: Record<string, string | undefined> | null): Record<string, string> {
  const out = dictionary<string>();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v === undefined) continue;
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

/**
 * Starts the request's state on a context of this invocation's own (the Lambda context object
 * itself stays untouched, so a reused context never carries an earlier request's state).
 */
function requestState(op: Operation): Middleware {
  return {
    before: (request) => {
      const { event } = request;
      const state: RequestState = {
        headers: lowerHeaders(event),
        raw: event.body ?? '',
        log: requestLogger({ request_id: requestIdOf(event, request.context), operation: op.operationId }),
        principal: anonymous,
      };
      request.context = Object.assign(Object.create(request.context) as Context, { request: state });
    },
  };
}

/** The state of a request that may have failed before (or while) `requestState` ran. */
function maybeStateOf(context: Context): RequestState | undefined {
  return (context as Partial<StatefulContext>).request;
}

/** The status the client gets: the response's, or 500 when no middleware answered. */
function statusOf(request: Request): number {
  return request.response?.statusCode ?? 500;
}

/**
 * The request's X-Ray subsegment (ADR 0092), opened first and closed last: annotated with the
 * operation, the workspace once resolved and the status; flagged error (4xx), throttle (429) or
 * fault (5xx). No-op where tracing is off.
 */
function traced(op: Operation): Middleware {
  const close = (request: Request) => {
    const state = maybeStateOf(request.context);
    if (!state?.trace) return;
    if (state.workspaceId) state.trace.annotate('workspace', state.workspaceId);
    state.trace.close(statusOf(request));
  };
  return {
    before: ({ context }) => {
      const trace = traceRequest(op.operationId);
      trace?.annotate('operation', op.operationId);
      stateOf(context).trace = trace;
    },
    after: close,
    onError: close,
  };
}

/**
 * The request's metrics (ADR 0092): one EMF line per request with `Requests`, `Latency`, `4xx`,
 * `5xx` and `Throttled` (the store marks an outage caused by DynamoDB throttling) under the
 * dimension `operation`. Registered early, so it runs after every other middleware's `after` and
 * after the error mapper: it sees the status the client gets.
 */
function measured(op: Operation): Middleware {
  const record = (request: Request) => {
    const state = maybeStateOf(request.context);
    if (!state || state.measured) return;
    state.measured = true;
    recordRequest({
      operation: op.operationId,
      status: statusOf(request),
      latencyMs: performance.now() - (state.startedAt ?? performance.now()),
      throttled: isThrottled(request.error),
    });
  };
  return {
    before: ({ context }) => {
      stateOf(context).startedAt = performance.now();
    },
    after: record,
    onError: record,
  };
}

/** The API's security headers on every answer, errors included (registered first, so it runs last). */
function withSecurityHeaders(): Middleware {
  const add = (request: Request) => {
    if (request.response) request.response.headers = { ...securityHeaders, ...request.response.headers };
  };
  return { after: add, onError: add };
}

/** 426 for plain HTTP (API Gateway forwards the scheme it was called with). */
function httpsOnly(): Middleware {
  return {
    before: ({ context }) => {
      const proto = stateOf(context).headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
      if (proto === 'http') throw new HttpsRequiredError();
    },
  };
}

/** 413 on the body's bytes, before anything reads it (an oversized malformed body is 413, not 400). */
function bodyLimit(op: Operation): Middleware {
  return {
    before: ({ event, context }) => {
      const size = bodyBytes(event, stateOf(context).raw).length;
      // Raw bytes and base64 bodies also stop where their encoding outgrows Lambda's payload (ADR 0116).
      const limit = bodyLimitOf(op, config().MAX_BODY_BYTES, event.isBase64Encoded === true);
      if (size > limit) {
        throw new PayloadTooLargeError(
          'body_too_large',
          `The request body is ${size} bytes; the limit is ${limit}.`,
        );
      }
    },
  };
}

/** 401 without the authorizer's principal (except public routes); 403 for a cookie request without CSRF echo. */
function authenticated(op: Operation): Middleware {
  return {
    before: ({ event, context }) => {
      const principal = fromContext(event.requestContext?.authorizer as Record<string, unknown> | undefined);
      if (!principal && op.permission !== 'public') throw new UnauthenticatedError();
      // A cookie-authenticated unsafe request must echo the CSRF cookie in X-CSRF-Token.
      if (principal?.session && !principal.session.csrfOk) {
        throw new ForbiddenError('csrf_failed', 'The X-CSRF-Token header must equal the csrf_token cookie.');
      }
      const state = stateOf(context);
      state.principal = principal ?? anonymous;
      if (principal?.id) state.log.appendPersistentKeys({ principal_id: principal.id });
    },
  };
}

/** 415 for a body in a media type the route does not take (ADR 0075). */
function mediaType(op: Operation): Middleware {
  return {
    before: ({ event, context }) => {
      const { headers, raw } = stateOf(context);
      checkContentType(op, event, headers, raw);
    },
  };
}

/** 400 for a missing or malformed JSON body on routes that take one. */
function jsonBody(op: Operation): Middleware {
  return {
    before: ({ event, context }) => {
      if (!op.request.body) return;
      const state = stateOf(context);
      const text = event.isBase64Encoded ? bodyBytes(event, state.raw).toString('utf8') : state.raw;
      if (text.trim() === '') throw new BadRequestError('body_required', 'A JSON request body is required.');
      try {
        state.json = JSON.parse(text);
      } catch {
        throw new BadRequestError('malformed_json', 'The request body is not valid JSON.');
      }
    },
  };
}

/** 400 with the issues of every schema the request breaks (path, query, body). */
function validated(op: Operation): Middleware {
  return {
    before: ({ event, context }) => {
      const state = stateOf(context);
      state.input = {
        params: parse(op.request.params, decodeParams(event.pathParameters), 'path'),
        query: parse(
          op.request.query,
          dictionary(Object.entries(event.queryStringParameters ?? {})),
          'query',
        ),
        body: parse(op.request.body, state.json, 'body'),
        principal: state.principal,
        ifMatch: state.headers['if-match'],
        requestId: requestIdOf(event, context),
        sourceIp: event.requestContext?.identity?.sourceIp ?? '',
        headers: state.headers,
        ...(op.rawBody ? { rawBody: bodyBytes(event, state.raw) } : {}),
      } as HandlerRequest<Operation>;
    },
  };
}

/**
 * The `{workspace}` and the policy: one authorization per request. Where the workspace can't change
 * the answer (global routes, routes without one) it is decided before the lookup, so only
 * super_admin may learn whether a workspace exists: everyone else gets the same 403 for a missing
 * workspace and for one they have no role in (DESIGN §5).
 */
function workspaceAccess(op: Operation, accessPorts: () => AccessPorts): Middleware {
  return {
    before: async ({ event, context }) => {
      const input = stateOf(context).input as HandlerRequest<Operation>;
      const caller = input.principal;
      const access = accessPorts();
      const loadPolicies = policyLoader(access);
      const workspaceParam = (input.params as { workspace?: string } | undefined)?.workspace;
      const decidedFirst = workspaceParam === undefined || op.permission === 'global';
      if (decidedFirst) await authorize(caller, op, undefined, loadPolicies);
      if (workspaceParam === undefined) {
        absent(input, 'workspace', op);
        return;
      }
      // What the authorizer read with the credential (ADR 0099); what it did not read is read here.
      const known = knownTargets(event.requestContext?.authorizer as Record<string, unknown> | undefined);
      const workspace = await resolveWorkspace(
        access.workspaces,
        workspaceParam,
        op.resolvesDeletingWorkspace === true,
        known.workspace,
      );
      if (!workspace) {
        if (!caller.superAdmin)
          throw new ForbiddenError(NO_WORKSPACE_ACCESS, 'You have no role in this workspace.');
        throw new NotFoundError('workspace_not_found', `Workspace '${workspaceParam}' does not exist.`);
      }
      caller.roles = await rolesInWorkspace(access, caller, workspace, known.claimRole);
      const state = stateOf(context);
      state.log.appendPersistentKeys({ workspace_id: workspace.id });
      state.workspaceId = workspace.id;
      if (!decidedFirst) {
        try {
          await authorize(caller, op, workspace, loadPolicies);
        } catch (error) {
          // A caller without a role gets the same refusal whether or not the workspace exists, and
          // so does its audit record: the global trail's, not the workspace's (ADR 0109).
          if (error instanceof ForbiddenError && error.reason === NO_WORKSPACE_ACCESS)
            delete state.workspaceId;
          throw error;
        }
      }
      input.workspace = workspace;
      if (known.service?.workspaceId === workspace.id) state.knownService = known.service;
    },
  };
}

/** A property of the request that its route doesn't have: reading it is a bug of the handler. */
function absent(input: object, name: string, op: Operation): void {
  Object.defineProperty(input, name, {
    get() {
      throw new Error(`${op.operationId} has no {${name}} parameter`);
    },
  });
}

/**
 * The `{service}` of service routes, once the caller may call the operation (so a caller without
 * a role learns nothing of services) and after an idempotent replay (which answers as the first
 * request did, whatever happened to the service since): 404 `service_not_found` unless it is
 * active, or being deleted on operations that resolve such a service (deleteService). A read takes
 * the service the authorizer carried for this very parameter and workspace (ADR 0099), and so does
 * a change that only names it (`takesCarriedService`); any other change reads it afresh, with its
 * sealed password and its current version.
 */
function serviceAccess(op: Operation, accessPorts: () => AccessPorts): Middleware {
  return {
    before: async ({ context }) => {
      const state = stateOf(context);
      if (state.replay) return;
      const input = state.input as HandlerRequest<Operation>;
      const serviceParam = (input.params as { service?: string } | undefined)?.service;
      if (serviceParam === undefined) {
        absent(input, 'service', op);
        return;
      }
      input.service = await requireService(
        accessPorts().services,
        input.workspace.id,
        serviceParam,
        op.resolvesDeletingService === true,
        op.method === 'GET' || op.takesCarriedService ? state.knownService : undefined,
      );
    },
  };
}

/**
 * `Idempotency-Key` on POSTs (ADR 0088), once the caller is known and allowed: the first request
 * claims (principal, operation, key) and its 2xx answer is kept; a retry gets it replayed, 422 with
 * another request, 409 while the first runs. A failed first request frees the key. Anonymous
 * requests and answers that set a cookie keep nothing (ADR 0109).
 */
function idempotent(op: Operation, ports: (() => IdempotencyPorts) | undefined): Middleware {
  return {
    before: async ({ event, context }) => {
      if (op.method !== 'POST' || !ports) return;
      const state = stateOf(context);
      const key = idempotencyKeyOf(state.headers);
      if (key === undefined) return;
      // Without a principal (login) there is no caller to bind a stored answer to, and the answer
      // would be a session: the key is accepted and nothing is kept (ADR 0109).
      if (!state.principal.id) return;
      const fingerprint = requestFingerprint({
        method: op.method,
        path: op.path,
        params: decodeParams(event.pathParameters),
        query: dictionary(
          Object.entries(event.multiValueQueryStringParameters ?? {}).map(([k, v]) => [k, v ?? []]),
        ),
        body: op.request.body ? state.json : state.raw,
      });
      const scope = { principalId: state.principal.id, operationId: op.operationId, key };
      const started = await startIdempotent(
        ports(),
        scope,
        fingerprint,
        context.getRemainingTimeInMillis?.(),
      );
      if ('replay' in started) state.replay = started.replay;
      else state.claim = started.claim;
    },
    after: async ({ context, response }) => {
      const { claim } = stateOf(context);
      if (claim && ports && response) await finishIdempotent(ports(), claim, response);
    },
    onError: async ({ context, error }) => {
      const claim = (context as Partial<StatefulContext>).request?.claim;
      // Out of time, the operation may still finish (the handler is not stopped): its claim is
      // kept until its deadline, as for a crash, so a retry meanwhile is 409, never a second run.
      if ((error as { reason?: string } | null)?.reason === REQUEST_TIMEOUT) return;
      if (claim && ports) await abandonIdempotent(ports(), claim);
    },
  };
}

function respond(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
  cookies?: string[],
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    ...(cookies?.length ? { multiValueHeaders: { 'Set-Cookie': cookies } } : {}),
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/** Maps every error to the one table's status, body and headers; registered last so it handles errors first. */
function errorMapper(op: Operation, refusals: (() => RefusalLog) | undefined): Middleware {
  return {
    onError: async (request) => {
      const requestId = requestIdOf(request.event, request.context);
      const { status, body, headers } = toErrorResponse(request.error, requestId);
      // The cause is logged, never answered (ADR 0090): a bug at ERROR, an outage at WARN with
      // what was unavailable and why; a refusal at DEBUG, without the request's body.
      const log =
        (request.context as Partial<StatefulContext>).request?.log ??
        requestLogger({ request_id: requestId, operation: request.context.functionName ?? 'unknown' });
      if (status === 503) log.warn('dependency unavailable', { status, ...errorFields(request.error) });
      else if (status >= 500) log.error('request failed', { status, ...errorFields(request.error) });
      else log.debug('request refused', { status, reason: body.reason });
      // A refused change of a known caller is in the audit trail too (ADR 0094); a failure to
      // record it is logged, never answered instead of the refusal.
      const state = (request.context as Partial<StatefulContext>).request;
      if (refusals && op.method !== 'GET' && status >= 400 && status < 500 && state?.principal.id) {
        try {
          await refusals().recordRefusal({
            principal: {
              id: state.principal.id,
              auth_method: state.principal.session ? 'session' : state.principal.authMethod,
              ...(state.principal.subject ? { subject: state.principal.subject } : {}),
            },
            operation: op.operationId,
            requestId,
            ...(state.workspaceId ? { workspaceId: state.workspaceId } : {}),
            status,
            reason: body.reason,
          });
        } catch (error) {
          log.warn('refusal not recorded in the audit trail', errorFields(error));
        }
      }
      request.response = respond(status, body, headers);
    },
  };
}

/** What is left of the function's time when an unfinished handler is answered 503 instead. */
export const TIME_LIMIT_MARGIN_MS = 500;
/** The reason of that 503 (ADR 0102). */
export const REQUEST_TIMEOUT = 'request_timeout';

/**
 * THE handler factory: wraps one operation function with the middy stack of DESIGN §4, one named
 * middleware per step. The function gets a validated, authorized request and returns
 * `ok`/`created`/`accepted`/`noContent`. `accessPorts` (the workspace lookup, claim mappings, custom
 * roles' policies) is called per request; handlers use `makeHandler` of `shared/wiring`, which
 * passes the wired ports.
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
  accessPorts: () => AccessPorts,
  idempotencyPorts?: () => IdempotencyPorts,
  refusals?: () => RefusalLog,
) {
  return middy<Event, APIGatewayProxyResult, Error, Context>({
    // A handler still running this close to the function's time limit is answered 503 with
    // Retry-After (its dependency was too slow), with room left to log and answer it.
    timeoutEarlyInMillis: TIME_LIMIT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new UnavailableError(
        REQUEST_TIMEOUT,
        'The request did not finish within its time limit; a dependency was too slow. Retry later.',
      );
    },
  })
    .use(requestState(op))
    .use(traced(op))
    .use(measured(op))
    .use(withSecurityHeaders())
    .use(httpsOnly())
    .use(bodyLimit(op))
    .use(authenticated(op))
    .use(mediaType(op))
    .use(jsonBody(op))
    .use(validated(op))
    .use(workspaceAccess(op, accessPorts))
    .use(idempotent(op, idempotencyPorts))
    .use(serviceAccess(op, accessPorts))
    .use(errorMapper(op, refusals))
    .handler(async (_event, context) => {
      const state = stateOf(context);
      if (state.replay) return state.replay;
      const result = await fn(state.input as HandlerRequest<Op>);
      // Binary bodies (style assets) go back base64-encoded, as API Gateway expects.
      if (Buffer.isBuffer(result.body)) {
        return {
          statusCode: result.statusCode,
          headers: { ...result.headers },
          body: result.body.toString('base64'),
          isBase64Encoded: true,
        };
      }
      return respond(result.statusCode, result.body, result.headers, result.cookies);
    });
}
