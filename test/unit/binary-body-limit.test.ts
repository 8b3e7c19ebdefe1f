import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import {
  BINARY_MEDIA_TYPES,
  bodyLimitOf,
  isBinaryMediaType,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
  MAX_BINARY_BODY_BYTES,
  PROXY_EVENT_HEADROOM_BYTES,
} from '#api/payload-limits.ts';
import { ErrorBody } from '#api/schemas.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';

// The stage's ceiling at its highest (5 MiB, stage-config.ts): the binary cap must still win (ADR 0116).
vi.stubEnv('MAX_BODY_BYTES', String(5 * 1024 * 1024));
vi.mock('#wiring/repositories.ts', async (original) => ({
  ...(await original<typeof import('#wiring/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;
const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

/** A raw-body operation that declares the stage's whole 5 MiB (as a future upload route might). */
const rawOp = defineOperation({
  operationId: 'testRawUpload',
  method: 'PUT',
  path: '/api/v1/blobs',
  handler: 'test',
  permission: 'global',
  summary: 'test',
  tags: ['test'],
  request: {},
  responses: { 201: { description: 'stored' } },
  data: [],
  rawBody: true,
  maxBodyBytes: 5 * 1024 * 1024,
});
const jsonOp = defineOperation({
  ...rawOp,
  operationId: 'testJsonUpload',
  rawBody: undefined,
  request: { body: z.object({ blob: z.string() }) },
});

const raw = makeChangeHandler(rawOp, async ({ rawBody }) => created({ size: rawBody?.length }, '/x'));
const json = makeChangeHandler(jsonOp, async ({ body }) => created({ size: body.blob.length }, '/x'));

function binaryEvent(bytes: number, type = 'application/octet-stream'): APIGatewayProxyEvent {
  const e = structuredClone(fixture);
  e.httpMethod = 'PUT';
  e.headers['Content-Type'] = type;
  return { ...e, body: Buffer.alloc(bytes, 7).toString('base64'), isBase64Encoded: true };
}

describe('the binary body cap (ADR 0116)', () => {
  it('is the most whose base64 fits Lambda’s 6 MB invoke payload with the event’s headroom', () => {
    // Prepare + Act
    const encoded = Math.ceil(MAX_BINARY_BODY_BYTES / 3) * 4;
    const oneMore = Math.ceil((MAX_BINARY_BODY_BYTES + 1) / 3) * 4;

    // Assess
    expect(MAX_BINARY_BODY_BYTES).toBe(4_521_984);
    expect(encoded + PROXY_EVENT_HEADROOM_BYTES).toBeLessThanOrEqual(LAMBDA_INVOKE_PAYLOAD_BYTES);
    expect(oneMore + PROXY_EVENT_HEADROOM_BYTES).toBeGreaterThan(LAMBDA_INVOKE_PAYLOAD_BYTES);
    // The event of a body at the cap, its fixture headers included, fits with room to spare.
    const atCap = JSON.stringify(binaryEvent(MAX_BINARY_BODY_BYTES));
    expect(Buffer.byteLength(atCap)).toBeLessThan(LAMBDA_INVOKE_PAYLOAD_BYTES - 200_000);
  });

  it.each([
    ['image/png', true],
    ['IMAGE/SVG+XML; charset=utf-8', true],
    ['application/octet-stream', true],
    ['application/vnd.mapbox-vector-tile', true],
    ['application/json', false],
    ['text/plain', false],
    [undefined, false],
    ['', false],
  ])('treats Content-Type %s as binary: %s (the REST API’s binaryMediaTypes)', (type, binary) => {
    expect(isBinaryMediaType(type)).toBe(binary);
    expect(BINARY_MEDIA_TYPES).toEqual([
      'image/*',
      'application/octet-stream',
      'application/vnd.mapbox-vector-tile',
    ]);
  });

  it('caps raw operations and base64 bodies whatever maxBodyBytes and MAX_BODY_BYTES say', () => {
    const fiveMiB = 5 * 1024 * 1024;
    expect(bodyLimitOf({ rawBody: true, maxBodyBytes: fiveMiB }, fiveMiB, false)).toBe(MAX_BINARY_BODY_BYTES);
    expect(bodyLimitOf({ maxBodyBytes: fiveMiB }, fiveMiB, true)).toBe(MAX_BINARY_BODY_BYTES);
    expect(bodyLimitOf({ maxBodyBytes: fiveMiB }, fiveMiB, false)).toBe(fiveMiB);
    expect(bodyLimitOf({ rawBody: true, maxBodyBytes: 512 * 1024 }, fiveMiB, true)).toBe(512 * 1024);
  });

  it('accepts a binary body at the cap and answers the standard 413 one byte over it', async () => {
    // Act
    const at = await raw(binaryEvent(MAX_BINARY_BODY_BYTES), context);
    const over = await raw(binaryEvent(MAX_BINARY_BODY_BYTES + 1, 'image/png'), context);

    // Assess
    expect(at.statusCode).toBe(201);
    expect(JSON.parse(at.body)).toEqual({ size: MAX_BINARY_BODY_BYTES });
    expect(over.statusCode).toBe(413);
    const body = ErrorBody.parse(JSON.parse(over.body));
    expect(body).toMatchObject({ code: 413, reason: 'body_too_large' });
    expect(body.detail).toBe(
      `The request body is ${MAX_BINARY_BODY_BYTES + 1} bytes; the limit is ${MAX_BINARY_BODY_BYTES}.`,
    );
  });

  it('caps a raw body sent as text too, and leaves a JSON body as text up to MAX_BODY_BYTES', async () => {
    // Prepare: a raw body that arrived as text (a Content-Type outside the binary media types).
    const text = structuredClone(fixture);
    text.httpMethod = 'PUT';
    text.headers['Content-Type'] = 'text/plain';
    text.body = 'x'.repeat(MAX_BINARY_BODY_BYTES + 1);
    const jsonText = structuredClone(fixture);
    jsonText.body = JSON.stringify({ blob: 'x'.repeat(MAX_BINARY_BODY_BYTES + 1) });

    // Act + Assess
    expect((await raw(text, context)).statusCode).toBe(413);
    const accepted = await json(jsonText, context);
    expect(accepted.statusCode).toBe(201);
    expect(JSON.parse(accepted.body)).toEqual({ size: MAX_BINARY_BODY_BYTES + 1 });
  });
});
