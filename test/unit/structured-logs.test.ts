import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import { NotFoundError, UnavailableError } from '#domain/errors.ts';
import { throttledProgress, type WorkflowLog } from '#domain/workflow-log.ts';
import { makeIdempotentHandler as makeHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import {
  errorFields,
  isSensitiveKey,
  logger,
  REDACTED,
  redact,
  redactText,
  requestLogger,
} from '#log/logger.ts';

// No table here: a refusal's audit record (ADR 0094) goes nowhere (test/e2e/audit.test.ts covers it).
vi.mock('#wiring/repositories.ts', async (original) => ({
  ...(await original<typeof import('#wiring/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;
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
  request: { body: z.strictObject({ name: z.string() }) },
  responses: { 201: { description: 'created' } },
  data: [],
});

/** Every line the loggers write while `act` runs (stdout and stderr), parsed. */
async function captured(
  act: () => Promise<unknown>,
): Promise<{ text: string; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((c) => chunks.push(String(c)) > 0);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((c) => chunks.push(String(c)) > 0);
  try {
    await act();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  const text = chunks.join('');
  return {
    text,
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

afterEach(() => logger.setLogLevel('INFO'));

describe('redaction', () => {
  it.each([
    'Authorization',
    'authorization',
    'Cookie',
    'set-cookie',
    'X-API-Key',
    'x_api_key',
    'api_key',
    'key',
    'password',
    'serving_password',
    'client_secret',
    'id_token',
    'refresh_token',
    'csrf_token',
    'X-CSRF-Token',
    'GEOPLANE_SECRET_KEY',
    'session',
    'body',
  ])('treats %s as sensitive', (name) => {
    expect(isSensitiveKey(name)).toBe(true);
    expect(redact(name, 'value')).toBe(REDACTED);
  });

  it.each(['request_id', 'operation', 'workspace_id', 'principal_id', 'key_prefix', 'status', 'reason'])(
    'keeps %s',
    (name) => {
      expect(isSensitiveKey(name)).toBe(false);
      expect(redact(name, 'value')).toBe('value');
    },
  );

  it.each([
    ['an API key', 'key gpk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg rejected', 'AbCdEfGhIjKl'],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi', 'abc.def-ghi'],
    ['a JWT', 'token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', 'eyJzdWIiOiJ4In0'],
    ['a password in a URL', 'postgres://reader:s3cr3t-pw@db:5432/gis', 's3cr3t-pw'],
    ['a password=value pair', 'host=db password=hunter2 user=x', 'hunter2'],
  ])('removes %s from text', (_case, text, secret) => {
    const out = redactText(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it('redacts the message and stack of an error and keeps its cause chain', () => {
    const error = new UnavailableError('datasource_unavailable', 'unavailable', undefined, {
      cause: new Error('connect ECONNREFUSED postgres://u:pw1234@127.0.0.2:5432'),
    });
    const fields = errorFields(error);
    const json = JSON.stringify(fields, redact);
    expect(json).toContain('ECONNREFUSED');
    expect(json).toContain('datasource_unavailable');
    expect(json).not.toContain('pw1234');
  });

  it('keeps secrets out of a real log line, by field name and by shape', async () => {
    const { text, lines } = await captured(async () =>
      logger.info('login with Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', {
        headers: {
          Authorization: 'Bearer t0k3n',
          'X-API-Key': 'gpk_abcdefghijklmnop',
          Cookie: '__Host-session=s',
        },
        connection: { host: 'db', password: 'pa55' },
        note: 'postgres://u:pa55word@db/x',
      }),
    );
    for (const secret of ['t0k3n', 'gpk_abcdefghijklmnop', '__Host-session=s', 'pa55', 'eyJzdWIiOiJ4In0'])
      expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ level: 'INFO', connection: { host: 'db', password: REDACTED } });
  });
});

describe('makeHandler logs', () => {
  it('logs a 503 at WARN with the cause and the request, operation and principal ids', async () => {
    const handler = makeHandler(operation, async () => {
      throw new UnavailableError('datasource_unavailable', 'The data source is unavailable.', undefined, {
        cause: new Error('connect ECONNREFUSED 127.0.0.2:5432'),
      });
    });
    const { lines } = await captured(() => handler(structuredClone(fixture), context));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'WARN',
      request_id: fixture.requestContext.requestId,
      operation: 'testCreate',
      principal_id: 'apikey:3f1c1d3e-8b0e-4a57-9f6c-1f5d2e1b7a10',
      status: 503,
      error: { reason: 'datasource_unavailable', causes: ['Error: connect ECONNREFUSED 127.0.0.2:5432'] },
    });
  });

  it('logs nothing for a 4xx at the default level, and no body at DEBUG', async () => {
    const handler = makeHandler(operation, async () => {
      throw new NotFoundError('workspace_not_found', 'no such workspace');
    });
    const quiet = await captured(() => handler(structuredClone(fixture), context));
    expect(quiet.lines).toEqual([]);
    logger.setLogLevel('DEBUG');
    const e = structuredClone(fixture);
    e.body = '{"name":"a-body-value"}';
    const debug = await captured(() => handler(e, context));
    expect(debug.lines.at(-1)).toMatchObject({ level: 'DEBUG', status: 404, reason: 'workspace_not_found' });
    expect(debug.text).not.toContain('a-body-value');
  });

  it('keeps one request’s keys out of a concurrent one’s lines', async () => {
    const handler = makeHandler(operation, async ({ body }) => {
      await new Promise((r) => setTimeout(r, 5));
      if (body.name === 'fail') throw new Error('boom');
      return created({ name: body.name }, '/x');
    });
    const one = structuredClone(fixture);
    one.body = '{"name":"fail"}';
    one.requestContext.requestId = 'req-one';
    const two = structuredClone(fixture);
    two.requestContext.requestId = 'req-two';
    (two.requestContext.authorizer as Record<string, unknown>).principalId = 'apikey:other';
    const { lines } = await captured(() => Promise.all([handler(one, context), handler(two, context)]));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'ERROR', request_id: 'req-one', status: 500 });
  });
});

describe('requestLogger', () => {
  it('makes no child until a line is written, and keeps the keys added before and after it', async () => {
    const child = vi.spyOn(logger, 'createChild');
    try {
      const log = requestLogger({ request_id: 'req-lazy', operation: 'testLazy' });
      log.appendPersistentKeys({ principal_id: 'apikey:lazy' });
      expect(child).not.toHaveBeenCalled();
      const { lines } = await captured(async () => {
        log.info('first');
        log.appendPersistentKeys({ workspace_id: 'ws-lazy' });
        log.warn('second');
      });
      expect(child).toHaveBeenCalledTimes(1);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'INFO',
          message: 'first',
          request_id: 'req-lazy',
          principal_id: 'apikey:lazy',
        }),
        expect.objectContaining({
          level: 'WARN',
          message: 'second',
          operation: 'testLazy',
          workspace_id: 'ws-lazy',
        }),
      ]);
      expect(lines[0]).not.toHaveProperty('workspace_id');
    } finally {
      child.mockRestore();
    }
  });
});

describe('throttled workflow progress', () => {
  it('speaks at most once per interval', () => {
    let t = 0;
    const info = vi.fn();
    const log: WorkflowLog = { info, warn: vi.fn() };
    const report = throttledProgress(log, 'progress', () => t, 5000);
    for (t = 0; t <= 12_000; t += 500) report(() => ({ at: t }));
    expect(info.mock.calls.map((c) => (c[1] as { at: number }).at)).toEqual([5000, 10000]);
  });
});
