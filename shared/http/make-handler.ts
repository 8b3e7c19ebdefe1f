import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { acceptsContentType, JSON_MEDIA_TYPES } from '../api/content-types.ts';
import type { InputOf, Operation, Schema } from '../api/operation.ts';
import { authorize } from '../auth/permissions.ts';
import { fromContext, type Principal } from '../auth/principal.ts';
import { type AccessPorts, policyLoader, rolesInWorkspace } from '../auth/workspace-access.ts';
import { config } from '../config/env.ts';
import { dictionary } from '../domain/dictionary.ts';
import { NotFoundError } from '../domain/errors.ts';
import { resolveWorkspace, type Workspace } from '../domain/workspaces.ts';
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

/** Validated input per event, handed from the middleware to the operation function. */
const inputs = new WeakMap<Event, HandlerRequest<Operation>>();

const anonymous: Principal = {
  id: '',
  subject: '',
  authMethod: 'apikey',
  superAdmin: false,
  roles: {},
  usageKey: 'anonymous',
};

function lowerHeaders(event: Event): Record<string, string> {
  const out = dictionary<string>();
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
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

/** The transport checks, body parsing, validation and authorization, in DESIGN §4 order. */
function prepare(
  op: Operation,
  accessPorts: () => AccessPorts,
): MiddlewareObj<Event, APIGatewayProxyResult, Error, Context> {
  return {
    before: async (request) => {
      const { event, context } = request;
      const headers = lowerHeaders(event);
      const proto = headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
      if (proto === 'http') throw new HttpsRequiredError();

      const raw = event.body ?? '';
      const size = Buffer.byteLength(raw, event.isBase64Encoded ? 'base64' : 'utf8');
      const limit = Math.min(op.maxBodyBytes ?? Number.POSITIVE_INFINITY, config().MAX_BODY_BYTES);
      if (size > limit) {
        throw new PayloadTooLargeError(
          'body_too_large',
          `The request body is ${size} bytes; the limit is ${limit}.`,
        );
      }

      const principal = fromContext(event.requestContext?.authorizer as Record<string, unknown> | undefined);
      if (!principal && op.permission !== 'public') throw new UnauthenticatedError();
      // A cookie-authenticated unsafe request must echo the CSRF cookie in X-CSRF-Token.
      if (principal?.session && !principal.session.csrfOk) {
        throw new ForbiddenError('csrf_failed', 'The X-CSRF-Token header must equal the csrf_token cookie.');
      }

      checkContentType(op, event, headers, raw);

      let body: unknown;
      if (op.request.body) {
        const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
        if (text.trim() === '')
          throw new BadRequestError('body_required', 'A JSON request body is required.');
        try {
          body = JSON.parse(text);
        } catch {
          throw new BadRequestError('malformed_json', 'The request body is not valid JSON.');
        }
      }

      const input = {
        params: parse(op.request.params, decodeParams(event.pathParameters), 'path'),
        query: parse(
          op.request.query,
          dictionary(Object.entries(event.queryStringParameters ?? {})),
          'query',
        ),
        body: parse(op.request.body, body, 'body'),
        principal: principal ?? anonymous,
        ifMatch: headers['if-match'],
        requestId: requestIdOf(event, context),
        sourceIp: event.requestContext?.identity?.sourceIp ?? '',
        headers,
        ...(op.rawBody ? { rawBody: Buffer.from(raw, event.isBase64Encoded ? 'base64' : 'utf8') } : {}),
      } as HandlerRequest<Operation>;

      const access = accessPorts();
      const loadPolicies = policyLoader(access);
      const workspaceParam = (input.params as { workspace?: string } | undefined)?.workspace;
      if (workspaceParam !== undefined) {
        const caller = input.principal;
        // Only super_admin may learn whether a workspace exists: everyone else gets the same 403
        // for a missing workspace and for one they have no role in (DESIGN §5).
        if (op.permission === 'global') await authorize(caller, op, undefined, loadPolicies);
        const workspace = await resolveWorkspace(
          access.workspaces,
          workspaceParam,
          op.resolvesDeletingWorkspace === true,
        );
        if (!workspace) {
          if (!caller.superAdmin)
            throw new ForbiddenError('no_workspace_access', 'You have no role in this workspace.');
          throw new NotFoundError('workspace_not_found', `Workspace '${workspaceParam}' does not exist.`);
        }
        caller.roles = await rolesInWorkspace(access, caller, workspace);
        await authorize(caller, op, workspace, loadPolicies);
        input.workspace = workspace;
      } else {
        await authorize(input.principal, op, undefined, loadPolicies);
        Object.defineProperty(input, 'workspace', {
          get() {
            throw new Error(`${op.operationId} has no {workspace} parameter`);
          },
        });
      }
      inputs.set(event, input);
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
    headers: {
      ...securityHeaders,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(cookies?.length ? { multiValueHeaders: { 'Set-Cookie': cookies } } : {}),
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/** Maps every error to the standard body; registered last so it handles errors first. */
function errorMapper(): MiddlewareObj<Event, APIGatewayProxyResult, Error, Context> {
  return {
    onError: async (request) => {
      const requestId = requestIdOf(request.event, request.context);
      const { status, body, headers } = toErrorResponse(request.error, requestId);
      if (status >= 500 && status !== 503) {
        console.error(
          JSON.stringify({ level: 'ERROR', requestId, error: String(request.error?.stack ?? request.error) }),
        );
      }
      request.response = respond(status, body, headers);
    },
  };
}

/**
 * THE handler factory: wraps one operation function with the middy stack of DESIGN §4. The
 * function gets a validated, authorized request and returns `ok`/`created`/`accepted`/`noContent`.
 * `accessPorts` (the workspace lookup, claim mappings, custom roles' policies) is called per
 * request; handlers use `makeHandler` of `shared/wiring`, which passes the wired ports.
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
  accessPorts: () => AccessPorts,
) {
  return middy<Event, APIGatewayProxyResult, Error, Context>()
    .use(prepare(op, accessPorts))
    .use(errorMapper())
    .handler(async (event) => {
      const input = inputs.get(event) as HandlerRequest<Op> | undefined;
      if (!input) throw new Error('request was not prepared');
      const result = await fn(input);
      // Binary bodies (style assets) go back base64-encoded, as API Gateway expects.
      if (Buffer.isBuffer(result.body)) {
        return {
          statusCode: result.statusCode,
          headers: { ...securityHeaders, ...result.headers },
          body: result.body.toString('base64'),
          isBase64Encoded: true,
        };
      }
      return respond(result.statusCode, result.body, result.headers, result.cookies);
    });
}
