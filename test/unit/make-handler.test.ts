import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import { ErrorBody } from '#api/schemas.ts';
import {
  AlreadyExistsError,
  DependencyConflictError,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
  UnavailableError,
  VersionMismatchError,
} from '#domain/errors.ts';
import { UnsupportedMediaTypeError } from '#http/errors.ts';
import { TIME_LIMIT_MARGIN_MS } from '#http/make-handler.ts';
import { created, noContent } from '#http/responses.ts';
import { makeHandlerOfKind } from '../support/handlers.ts';

/** The wired factory of the operation's kind (reads and changes have their own; ADR 0094). */
// No table here: a refusal's audit record (ADR 0094) goes nowhere (test/e2e/audit.test.ts covers it).
vi.mock('#wiring/repositories.ts', async (original) => ({
  ...(await original<typeof import('#wiring/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const makeHandler = makeHandlerOfKind;

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return { ...structuredClone(fixture), ...overrides };
}

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const operation = defineOperation({
  operationId: 'testCreate',
  method: 'POST',
  path: '/api/v1/workspaces',
  handler: 'test',
  permission: 'global',
  summary: 'test',
  tags: ['test'],
  request: { body: z.strictObject({ name: z.string().check(z.minLength(1)) }) },
  responses: { 201: { description: 'created' } },
  data: [],
});

function handlerThrowing(error: unknown) {
  return makeHandler(operation, async () => {
    throw error;
  });
}

const ok = makeHandler(operation, async ({ body, principal }) =>
  created({ name: body.name, by: principal.subject, version: 3 }, '/api/v1/workspaces/x'),
);

function parsed(result: { body: string }) {
  return JSON.parse(result.body) as Record<string, unknown>;
}

describe('makeHandler', () => {
  it('runs the operation with the validated body and principal (201, ETag, Location, security headers)', async () => {
    const result = await ok(event(), context);
    expect(result.statusCode).toBe(201);
    expect(parsed(result)).toEqual({ name: 'ws-from-fixture', by: 'ci-robot', version: 3 });
    expect(result.headers).toMatchObject({
      ETag: '"3"',
      Location: '/api/v1/workspaces/x',
      'X-Content-Type-Options': 'nosniff',
      'Strict-Transport-Security': expect.stringContaining('max-age='),
    });
  });

  it('answers 426 with Upgrade when X-Forwarded-Proto is http', async () => {
    const e = event();
    e.headers['X-Forwarded-Proto'] = 'http';
    const result = await ok(e, context);
    expect(result.statusCode).toBe(426);
    expect(result.headers?.Upgrade).toBe('TLS/1.2, HTTP/1.1');
  });

  it('answers 413 on body bytes before parsing (an oversized malformed body is 413, not 400)', async () => {
    const result = await ok(event({ body: `{${'x'.repeat(1024 * 1024)}` }), context);
    expect(result.statusCode).toBe(413);
    expect(parsed(result).reason).toBe('body_too_large');
  });

  it('counts base64 bodies by their decoded bytes', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'b64' })).toString('base64');
    const result = await ok(event({ body, isBase64Encoded: true }), context);
    expect(result.statusCode).toBe(201);
    expect(parsed(result).name).toBe('b64');
  });

  it.each([
    ['malformed JSON', '{"name":', 'malformed_json'],
    ['an empty body', '', 'body_required'],
    ['an unknown field', '{"name":"a","extra":1}', 'validation_failed'],
    ['a wrong type', '{"name":5}', 'validation_failed'],
  ])('answers 400 for %s', async (_case, body, reason) => {
    const result = await ok(event({ body }), context);
    expect(result.statusCode).toBe(400);
    expect(parsed(result).reason).toBe(reason);
  });

  it('lists validation issues with their paths', async () => {
    const result = await ok(event({ body: '{"name":"","extra":1}' }), context);
    const issues = parsed(result).issues as { path: string; message: string }[];
    expect(issues.map((i) => i.path).sort()).toEqual(['body', 'body.name']);
    expect(issues.every((i) => i.message.length > 0 && i.message !== 'Invalid input')).toBe(true);
  });

  it('answers 401 without an authorizer principal and 403 for a non-super-admin on a global route', async () => {
    const anonymous = event();
    anonymous.requestContext.authorizer = null;
    expect((await ok(anonymous, context)).statusCode).toBe(401);
    const admin = event();
    (admin.requestContext.authorizer as Record<string, unknown>).superAdmin = 'false';
    const result = await ok(admin, context);
    expect(result.statusCode).toBe(403);
    expect(parsed(result).reason).toBe('super_admin_required');
  });

  it.each([
    [new InvalidInputError('invalid_parameter', 'd'), 400],
    [new NotFoundError('invalid_parameter', 'd'), 404],
    [new AlreadyExistsError('invalid_parameter', 'd'), 409],
    [new DependencyConflictError('invalid_parameter', 'd', { plan: [1] }), 409],
    [new StateConflictError('invalid_parameter', 'd'), 409],
    [new VersionMismatchError('invalid_parameter', 'd'), 412],
    [new RuleViolationError('invalid_parameter', 'd'), 422],
    [new UnavailableError('invalid_parameter', 'd'), 503],
  ])('maps %o to %i with the standard body', async (error, status) => {
    const result = await handlerThrowing(error)(event(), context);
    expect(result.statusCode).toBe(status);
    const body = parsed(result);
    expect(ErrorBody.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({
      code: status,
      detail: 'd',
      reason: 'invalid_parameter',
      request_id: fixture.requestContext.requestId,
    });
  });

  it("answers 503 with Retry-After, not 500, when the handler outlives the function's time limit", async () => {
    const stuck = makeHandler(operation, () => new Promise(() => {}));
    const nearlyOut = { ...context, getRemainingTimeInMillis: () => TIME_LIMIT_MARGIN_MS + 50 } as Context;
    const started = Date.now();
    const result = await stuck(event(), nearlyOut);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.statusCode).toBe(503);
    expect(result.headers).toMatchObject({ 'Retry-After': '1' });
    expect(parsed(result)).toMatchObject({ code: 503, reason: 'request_timeout' });
    expect(ErrorBody.safeParse(parsed(result)).success).toBe(true);
  });

  it('merges extra fields of a domain error into the body', async () => {
    const result = await handlerThrowing(
      new DependencyConflictError('invalid_parameter', 'd', { plan: [1] }),
    )(event(), context);
    expect(parsed(result).plan).toEqual([1]);
  });

  it.each([
    [new Error('secret connection string postgres://u:p@h')],
    [new TypeError('x is undefined')],
    ['a thrown string'],
    [{ weird: 'object' }],
    [null],
    [undefined],
  ])('turns any other thrown value (%o) into a generic 500 that leaks nothing', async (thrown) => {
    const log = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const result = await handlerThrowing(thrown)(event(), context);
    // The cause is logged at ERROR with the request id (its password redacted), never returned.
    const line = log.mock.calls.map((c) => String(c[0])).join('');
    log.mockRestore();
    expect(JSON.parse(line)).toMatchObject({ level: 'ERROR', request_id: fixture.requestContext.requestId });
    expect(line).not.toContain('u:p@');
    expect(result.statusCode).toBe(500);
    const body = parsed(result);
    expect(ErrorBody.safeParse(body).success).toBe(true);
    expect(result.body).not.toMatch(/postgres|undefined|weird|string/);
  });

  describe('415: a JSON route takes application/json or application/<x>+json, charset utf-8 only', () => {
    const withType = (
      type: string | undefined,
      body = '{"name":"typed"}',
      extra: Partial<APIGatewayProxyEvent> = {},
    ) => {
      const e = event({ body, ...extra });
      delete e.headers['Content-Type'];
      if (type !== undefined) e.headers['content-type'] = type;
      return e;
    };

    it.each([
      ['text/plain'],
      ['text/plain; charset=utf-8'],
      ['application/x-www-form-urlencoded'],
      ['multipart/form-data; boundary=x'],
      ['application/xml'],
      ['text/json'],
      ['application/jsonx'],
      ['application/+json'],
      ['application/json; charset=iso-8859-1'],
      ['application/json; charset=utf-16'],
      ['application/json; charset=utf8'],
      ['application/json; charset=utf-8; q=1'],
      ['application/json; charset'],
      ['application/json, text/plain'],
      ['*/*'],
      ['application/*'],
      ['image/png'],
      ['application'],
      [''],
      [' '],
    ])('refuses %j with 415, the standard body and an Accept header', async (type) => {
      // Act
      const result = await ok(withType(type), context);
      // Assess
      expect(result.statusCode).toBe(415);
      const body = parsed(result);
      expect(ErrorBody.safeParse(body).success).toBe(true);
      expect(body).toMatchObject({
        code: 415,
        message: 'Unsupported Media Type',
        reason: 'unsupported_media_type',
        request_id: fixture.requestContext.requestId,
      });
      expect(result.headers?.Accept).toBe('application/json, application/*+json');
    });

    it.each([
      ['application/json'],
      ['Application/JSON'],
      ['application/json;charset=utf-8'],
      ['application/json; charset=UTF-8'],
      ['application/json ; charset="utf-8"'],
      ['application/json;'],
      ['application/merge-patch+json'],
      ['application/vnd.geoplane+json; charset=utf-8'],
    ])('accepts %j', async (type) => {
      const result = await ok(withType(type), context);
      expect(result.statusCode).toBe(201);
    });

    it('refuses a body without a Content-Type (415); neither body nor type is body_required (400)', async () => {
      expect((await ok(withType(undefined), context)).statusCode).toBe(415);
      const empty = await ok(withType(undefined, ''), context);
      expect(empty.statusCode).toBe(400);
      expect(parsed(empty).reason).toBe('body_required');
      const emptyTyped = await ok(withType('text/plain', ''), context);
      expect(emptyTyped.statusCode).toBe(415);
    });

    it('refuses a JSON body API Gateway passed base64 (a binary media type like image/png)', async () => {
      const body = Buffer.from('{"name":"b64"}').toString('base64');
      const result = await ok(withType('image/png', body, { isBase64Encoded: true }), context);
      expect(result.statusCode).toBe(415);
    });

    it('refuses two different Content-Type headers', async () => {
      const e = withType('application/json', '{"name":"two"}', {
        multiValueHeaders: { 'Content-Type': ['application/json', 'text/plain'] },
      });
      expect((await ok(e, context)).statusCode).toBe(415);
    });

    it('checks before parsing (a malformed body of the wrong type is 415) and after authentication', async () => {
      expect((await ok(withType('text/plain', '{"name":'), context)).statusCode).toBe(415);
      const anonymous = withType('text/plain');
      anonymous.requestContext.authorizer = null;
      expect((await ok(anonymous, context)).statusCode).toBe(401);
    });

    it('leaves raw-body routes (style assets) and body-less routes to any Content-Type', async () => {
      const raw = makeHandler({ ...operation, request: {}, rawBody: true }, async ({ rawBody }) =>
        created({ size: rawBody?.length }, '/x'),
      );
      const none = makeHandler({ ...operation, request: {} }, async () => noContent());
      const png = await raw(
        withType('image/png', Buffer.from([1, 2, 3]).toString('base64'), { isBase64Encoded: true }),
        context,
      );
      expect(png.statusCode).toBe(201);
      expect(parsed(png).size).toBe(3);
      expect((await raw(withType(undefined, 'text'), context)).statusCode).toBe(201);
      expect((await none(withType('text/plain', 'ignored'), context)).statusCode).toBe(204);
    });

    it('maps UnsupportedMediaTypeError to 415 in the one error table', async () => {
      const result = await handlerThrowing(new UnsupportedMediaTypeError('d', 'application/json'))(
        event(),
        context,
      );
      expect(result.statusCode).toBe(415);
      expect(parsed(result)).toMatchObject({ code: 415, reason: 'unsupported_media_type', detail: 'd' });
    });
  });
});
