import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import { ok } from '#http/responses.ts';
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

const echo = makeHandler(
  defineOperation({
    operationId: 'testEcho',
    method: 'POST',
    path: '/api/v1/echo',
    handler: 'test',
    permission: 'global',
    summary: 'test',
    tags: ['test'],
    request: { body: z.strictObject({ name: z.string() }) },
    responses: { 200: { description: 'echo' } },
    data: [],
  }),
  async ({ body }) => {
    await new Promise((r) => setTimeout(r, 5));
    return ok({ name: body.name });
  },
);

describe("makeHandler's per-request state", () => {
  it('keeps concurrent requests that share one context object apart, and leaves the context untouched', async () => {
    const context = { awsRequestId: 'shared', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
    const call = (name: string) =>
      echo({ ...structuredClone(fixture), body: JSON.stringify({ name }) }, context).then(
        (r) => JSON.parse(r.body).name,
      );
    expect(await Promise.all(['a', 'b', 'c'].map(call))).toEqual(['a', 'b', 'c']);
    expect(Object.keys(context)).toEqual(['awsRequestId', 'getRemainingTimeInMillis']);
  });
});
