import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation, type Operation } from '#api/operation.ts';
import { ErrorBody } from '#api/schemas.ts';
import type { AccessPorts } from '#auth/workspace-access.ts';
import { AesGcmSecretBox } from '#datasources/local-secret-box.ts';
import { StateConflictError } from '#domain/errors.ts';
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore } from '#domain/idempotency.ts';
import {
  IDEMPOTENCY_TTL_SECONDS,
  type IdempotencyPorts,
  IN_PROGRESS_MARGIN_MS,
  requestFingerprint,
} from '#http/idempotency.ts';
import { makeHandler, TIME_LIMIT_MARGIN_MS } from '#http/make-handler.ts';
import { created, type HandlerResult, ok } from '#http/responses.ts';

/**
 * An in-memory store with the DynamoDB store's rules (ADR 0088): a claim wins over an absent
 * record, one past its 24 h, or an in-progress one past its deadline; complete and release only
 * for the claim's owner.
 */
class MemoryStore implements IdempotencyStore {
  readonly items = new Map<
    string,
    {
      status: 'in_progress' | 'completed';
      fingerprint: string;
      claimId: string;
      inProgressUntil: number;
      expiresAt: number;
      response?: string;
    }
  >();
  calls = 0;
  failComplete = false;

  private id(scope: IdempotencyScope) {
    return JSON.stringify([scope.principalId, scope.operationId, scope.key]);
  }

  async claim(
    scope: IdempotencyScope,
    c: { claimId: string; fingerprint: string; nowMs: number; inProgressUntilMs: number },
  ): Promise<IdempotencyRecord | undefined> {
    this.calls++;
    const item = this.items.get(this.id(scope));
    const live =
      item &&
      item.expiresAt >= Math.floor(c.nowMs / 1000) &&
      (item.status === 'completed' || item.inProgressUntil >= c.nowMs);
    if (item && live) {
      return item.status === 'completed'
        ? { status: 'completed', fingerprint: item.fingerprint, response: item.response as string }
        : { status: 'in_progress', fingerprint: item.fingerprint };
    }
    this.items.set(this.id(scope), {
      status: 'in_progress',
      fingerprint: c.fingerprint,
      claimId: c.claimId,
      inProgressUntil: c.inProgressUntilMs,
      expiresAt: Math.ceil(c.inProgressUntilMs / 1000),
    });
    return undefined;
  }

  async complete(scope: IdempotencyScope, claimId: string, response: string, expiresAtEpoch: number) {
    if (this.failComplete) throw new Error('store down');
    const item = this.items.get(this.id(scope));
    if (item?.claimId !== claimId) return false;
    Object.assign(item, { status: 'completed', response, expiresAt: expiresAtEpoch });
    return true;
  }

  async release(scope: IdempotencyScope, claimId: string) {
    const item = this.items.get(this.id(scope));
    if (item?.claimId === claimId && item.status === 'in_progress') this.items.delete(this.id(scope));
  }
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

function event(
  body: unknown,
  headers: Record<string, string> = {},
  principalId?: string,
): APIGatewayProxyEvent {
  const e = structuredClone(fixture);
  e.body = typeof body === 'string' ? body : JSON.stringify(body);
  e.headers = { ...e.headers, ...headers };
  if (principalId) (e.requestContext.authorizer as Record<string, unknown>).principalId = principalId;
  return e;
}

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const noAccess = () => ({}) as AccessPorts;

function operation(operationId: string, method: Operation['method'] = 'POST') {
  return defineOperation({
    operationId,
    method,
    path: '/api/v1/things',
    handler: 'test',
    permission: 'global',
    summary: 'test',
    tags: ['test'],
    request: { body: z.strictObject({ name: z.string(), n: z.optional(z.number()) }) },
    responses: { 201: { description: 'created' } },
    data: [],
  });
}

let store: MemoryStore;
let clock: number;
let runs: number;
let ports: IdempotencyPorts;
const box = new AesGcmSecretBox(Buffer.alloc(32, 7));

beforeEach(() => {
  store = new MemoryStore();
  clock = Date.parse('2026-01-01T00:00:00Z');
  runs = 0;
  ports = { store, secretBox: box, now: () => clock };
});

/** A create that answers a new secret each time it really runs (like createAPIKey). */
function creating(op = operation('createThing'), fn?: () => Promise<HandlerResult>) {
  return makeHandler(
    op,
    async ({ body }) => {
      runs++;
      if (fn) return fn();
      return created(
        { name: body.name, key: `secret-${runs}-${Math.random()}`, version: 1 },
        `/api/v1/things/${runs}`,
      );
    },
    noAccess,
    () => ports,
  );
}

const json = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>;

function expectErrorBody(r: { statusCode: number; body: string }, status: number, reason: string) {
  expect(r.statusCode).toBe(status);
  expect(ErrorBody.safeParse(json(r)).success).toBe(true);
  expect(json(r).reason).toBe(reason);
}

describe('Idempotency-Key on POST', () => {
  it('replays the first answer (status, Location, ETag, body) without running the operation again', async () => {
    const handler = creating();
    const first = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k1' }), context);
    const again = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k1' }), context);
    expect(first.statusCode).toBe(201);
    expect(runs).toBe(1);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers).toMatchObject({
      Location: first.headers?.Location,
      ETag: first.headers?.ETag,
      'Idempotent-Replayed': 'true',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(first.headers?.['Idempotent-Replayed']).toBeUndefined();
  });

  it('treats the same JSON with its keys in another order as the same request', async () => {
    const handler = creating();
    await handler(event('{"name":"a","n":1}', { 'Idempotency-Key': 'k' }), context);
    const again = await handler(event('{ "n": 1, "name": "a" }', { 'idempotency-key': 'k' }), context);
    expect(again.statusCode).toBe(201);
    expect(again.headers?.['Idempotent-Replayed']).toBe('true');
    expect(runs).toBe(1);
  });

  it('answers 422 idempotency_key_reused for the same key with a different body', async () => {
    const handler = creating();
    await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    const other = await handler(event({ name: 'b' }, { 'Idempotency-Key': 'k' }), context);
    expectErrorBody(other, 422, 'idempotency_key_reused');
    expect(runs).toBe(1);
  });

  it('answers 409 idempotency_key_in_flight while the first request runs, then replays it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const handler = creating(operation('createThing'), async () => {
      await gate;
      return created({ name: 'slow', version: 1 }, '/api/v1/things/slow');
    });
    const first = handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    await new Promise((r) => setTimeout(r, 5));
    const duplicate = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expectErrorBody(duplicate, 409, 'idempotency_key_in_flight');
    // A different body while the first runs is a reuse, not a wait.
    expectErrorBody(
      await handler(event({ name: 'x' }, { 'Idempotency-Key': 'k' }), context),
      422,
      'idempotency_key_reused',
    );
    release();
    expect((await first).statusCode).toBe(201);
    const after = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expect(after.headers?.['Idempotent-Replayed']).toBe('true');
    expect(runs).toBe(1);
  });

  it('frees the key when the first request fails, so that a retry runs again (errors are not stored)', async () => {
    let fail = true;
    const handler = creating(operation('createThing'), async () => {
      if (fail) throw new StateConflictError('datasource_busy', 'try later');
      return created({ name: 'ok', version: 1 }, '/api/v1/things/1');
    });
    const failed = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expectErrorBody(failed, 409, 'datasource_busy');
    expect(store.items.size).toBe(0);
    fail = false;
    const retry = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs).toBe(2);
  });

  it('keeps one record per principal and per operation: the same key elsewhere runs on its own', async () => {
    const create = creating();
    const other = creating(operation('createOther'));
    await create(event({ name: 'a' }, { 'Idempotency-Key': 'k' }, 'apikey:one'), context);
    const second = await create(event({ name: 'b' }, { 'Idempotency-Key': 'k' }, 'apikey:two'), context);
    const third = await other(event({ name: 'c' }, { 'Idempotency-Key': 'k' }, 'apikey:one'), context);
    expect([second.statusCode, third.statusCode]).toEqual([201, 201]);
    expect(second.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(third.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs).toBe(3);
    expect(store.items.size).toBe(3);
  });

  it('replays for 24 h and runs again after that', async () => {
    const handler = creating();
    const first = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    clock += IDEMPOTENCY_TTL_SECONDS * 1000 - 1000;
    const within = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expect(within.body).toBe(first.body);
    clock += 2000;
    const later = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expect(later.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(later.body).not.toBe(first.body);
    expect(runs).toBe(2);
  });

  it('lets a retry run once a crashed first request is past its deadline (remaining time + margin)', async () => {
    // 50 ms left before the handler would be answered 503 (ADR 0102): the crash comes first.
    const remaining = TIME_LIMIT_MARGIN_MS + 50;
    const short = { ...context, getRemainingTimeInMillis: () => remaining } as unknown as Context;
    let crash = true;
    const handler = creating(operation('createThing'), async () => {
      // A process that dies answers nothing and releases nothing.
      if (crash) return new Promise<never>(() => {});
      return created({ name: 'ok', version: 1 }, '/api/v1/things/1');
    });
    void handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), short);
    await new Promise((r) => setTimeout(r, 5));
    crash = false;
    expectErrorBody(
      await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), short),
      409,
      'idempotency_key_in_flight',
    );
    clock += remaining + IN_PROGRESS_MARGIN_MS + 1;
    const retry = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), short);
    expect(retry.statusCode).toBe(201);
    expect(runs).toBe(2);
  });

  it('keeps the claim of a request answered 503 for its time limit: a retry meanwhile is 409, not a second run', async () => {
    const nearlyOut = {
      ...context,
      getRemainingTimeInMillis: () => TIME_LIMIT_MARGIN_MS + 20,
    } as unknown as Context;
    const handler = creating(operation('createThing'), () => new Promise<never>(() => {}));
    const first = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'slow' }), nearlyOut);
    expectErrorBody(first, 503, 'request_timeout');
    expectErrorBody(
      await handler(event({ name: 'a' }, { 'Idempotency-Key': 'slow' }), nearlyOut),
      409,
      'idempotency_key_in_flight',
    );
    expect(runs).toBe(1);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['256 characters', 'k'.repeat(256)],
  ])('answers 400 invalid_idempotency_key for a key that is %s', async (_case, key) => {
    const result = await creating()(event({ name: 'a' }, { 'Idempotency-Key': key }), context);
    expectErrorBody(result, 400, 'invalid_idempotency_key');
    expect(runs).toBe(0);
  });

  it('accepts a key of 255 characters', async () => {
    const result = await creating()(event({ name: 'a' }, { 'Idempotency-Key': 'k'.repeat(255) }), context);
    expect(result.statusCode).toBe(201);
    expect(store.items.size).toBe(1);
  });

  it('touches no record without the header, nor on other methods', async () => {
    await creating()(event({ name: 'a' }), context);
    const put = makeHandler(
      operation('putThing', 'PUT'),
      async () => ok({}),
      noAccess,
      () => ports,
    );
    expect(
      (await put(event({ name: 'a' }, { 'Idempotency-Key': 'x'.repeat(300) }), context)).statusCode,
    ).toBe(200);
    expect(store.calls).toBe(0);
  });

  it('stores the answer sealed: the secret is not in the record, and it opens only for its own scope', async () => {
    const handler = creating();
    const first = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    const secret = json(first).key as string;
    const [item] = [...store.items.values()];
    if (!item) throw new Error('no record');
    expect(item.response).toBeDefined();
    expect(item.response).not.toContain(secret);
    expect(item.response).not.toContain('secret-');
    // Moved to another principal's record, the sealed answer doesn't open (500, nothing leaks).
    store.items.set(JSON.stringify(['apikey:thief', 'createThing', 'k']), { ...item });
    const stolen = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }, 'apikey:thief'), context);
    expect(stolen.statusCode).toBe(500);
    expect(stolen.body).not.toContain(secret);
  });

  it.each([
    ['in headers', { 'Set-Cookie': '__Host-session=s3cret; Secure; HttpOnly' }, undefined],
    ['in multiValueHeaders', undefined, ['__Host-session=s3cret; Secure', 'csrf_token=c; Secure']],
    ['clearing cookies', undefined, ['__Host-session=; Max-Age=0']],
  ])(
    'never keeps an answer that sets a cookie (%s): a retry runs again, nothing is replayed (ADR 0109)',
    async (_case, headers, cookies) => {
      const handler = creating(operation('createSession'), async () => ({
        ...created({ session: runs }, '/api/v1/sessions/1'),
        ...(headers ? { headers } : {}),
        ...(cookies ? { cookies } : {}),
      }));
      const first = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
      const again = await handler(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
      expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
      expect(again.headers?.['Idempotent-Replayed']).toBeUndefined();
      expect(runs).toBe(2);
      expect(store.items.size).toBe(0);
    },
  );

  it('keeps nothing for a request without a principal (a public route such as login; ADR 0109)', async () => {
    const anonymous = event({ name: 'a' }, { 'Idempotency-Key': 'k' });
    anonymous.requestContext.authorizer = null;
    const handler = makeHandler(
      { ...operation('openThing'), permission: 'public' },
      async () => {
        runs++;
        return created({ n: runs }, '/api/v1/things/1');
      },
      noAccess,
      () => ports,
    );
    const first = await handler(anonymous, context);
    const again = await handler(structuredClone(anonymous), context);
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(json(again)).not.toEqual(json(first));
    expect(store.calls).toBe(0);
  });

  it('still answers the operation when its answer cannot be stored', async () => {
    store.failComplete = true;
    const result = await creating()(event({ name: 'a' }, { 'Idempotency-Key': 'k' }), context);
    expect(result.statusCode).toBe(201);
  });
});

describe('requestFingerprint', () => {
  const base = {
    method: 'POST',
    path: '/api/v1/x/{id}',
    params: { id: '1' },
    query: { a: ['1'] },
    body: { b: 1 },
  };

  it('changes with the path parameters, the query and the body, not with key order', () => {
    const f = requestFingerprint(base);
    expect(requestFingerprint({ ...base, params: { id: '2' } })).not.toBe(f);
    expect(requestFingerprint({ ...base, query: { a: ['2'] } })).not.toBe(f);
    expect(requestFingerprint({ ...base, body: { b: 2 } })).not.toBe(f);
    expect(requestFingerprint({ ...base, body: { b: 1, c: undefined } })).toBe(f);
    expect(requestFingerprint({ ...base, query: { a: ['1'] }, params: { id: '1' } })).toBe(f);
  });
});
