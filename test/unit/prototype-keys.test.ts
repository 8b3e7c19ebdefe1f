import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import { parseCookies } from '#auth/cookies.ts';
import { authorize, roleIn } from '#auth/permissions.ts';
import { fromContext, type Principal, toContext } from '#auth/principal.ts';
import { type ClaimMapping, claimValues, resolveRole } from '#domain/claim-mappings.ts';
import { dictionary, own } from '#domain/dictionary.ts';
import { InvalidInputError } from '#domain/errors.ts';
import { ForbiddenError } from '#http/errors.ts';
import { ok } from '#http/responses.ts';
import { decodeCursor } from '#store/paging.ts';
import { makeHandlerOfKind } from '../support/handlers.ts';

/** The wired factory of the operation's kind (reads and changes have their own; ADR 0094). */
// No table here: a refusal's audit record (ADR 0094) goes nowhere (test/e2e/audit.test.ts covers it).
vi.mock('#wiring/repositories.ts', async (original) => ({
  ...(await original<typeof import('#wiring/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const makeHandler = makeHandlerOfKind;

/** Names that are members of every plain object, and so of every `{}` used as a table. */
const inherited = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__proto__',
  '__defineGetter__',
];

function principal(roles: Record<string, string>): Principal {
  return { id: 'p', subject: 's', authMethod: 'jwt', superAdmin: false, roles };
}

const noPolicies = async () => [];

describe('roles keyed by workspace id or name', () => {
  it.each(inherited)('a workspace named %s finds no role the caller was not given', (name) => {
    const ws = { id: '6a1d3b2e-0000-4000-8000-000000000001', name };
    expect(roleIn(principal({}), ws)).toBeUndefined();
    expect(roleIn(principal({ 'other-ws': 'admin' }), ws)).toBeUndefined();
  });

  it.each(inherited)('a caller without a role in %s gets 403 no_workspace_access', async (name) => {
    const ws = { id: '6a1d3b2e-0000-4000-8000-000000000001', name };
    const refused = authorize(
      principal({}),
      { operationId: 'getWorkspace', permission: 'read' },
      ws,
      noPolicies,
    );
    await expect(refused).rejects.toBeInstanceOf(ForbiddenError);
    await expect(refused).rejects.toMatchObject({ reason: 'no_workspace_access' });
    await expect(refused).rejects.not.toMatchObject({ message: expect.stringContaining('native code') });
  });

  it('a role given by that name still counts', async () => {
    const ws = { id: '6a1d3b2e-0000-4000-8000-000000000001', name: 'constructor' };
    const roles = dictionary([['constructor', 'viewer']]);
    expect(roleIn(principal(roles), ws)).toBe('viewer');
    await expect(
      authorize(principal(roles), { operationId: 'getWorkspace', permission: 'read' }, ws, noPolicies),
    ).resolves.toBeUndefined();
  });

  it('the authorizer context round-trips roles as a prototype-free table of strings', () => {
    const ctx = {
      ...toContext(principal({})),
      principalId: 'jwt:s',
      roles: '{"__proto__":"admin","constructor":"viewer","odd":5,"ws":"editor"}',
    };
    const decoded = fromContext(ctx);
    expect(Object.getPrototypeOf(decoded?.roles)).toBeNull();
    expect(Object.entries(decoded?.roles ?? {})).toEqual([
      ['__proto__', 'admin'],
      ['constructor', 'viewer'],
      ['ws', 'editor'],
    ]);
    // Still exactly what it named: a workspace `constructor` is viewer, `odd` (not a string) nothing.
    expect(roleIn(decoded as Principal, { id: 'x', name: 'constructor' })).toBe('viewer');
    expect(roleIn(decoded as Principal, { id: 'x', name: 'odd' })).toBeUndefined();
    expect(roleIn(decoded as Principal, { id: 'x', name: 'toString' })).toBeUndefined();
  });
});

describe('claim mappings', () => {
  const mapping = (role_id: string, priority = 0): ClaimMapping => ({
    id: role_id,
    workspace_id: 'w',
    claim_name: 'groups',
    claim_value: 'gis',
    role_id,
    priority,
    custom_role: !['admin', 'editor', 'viewer', 'super_admin'].includes(role_id),
    created_at: '2024-01-01T00:00:00.000Z',
  });

  it.each(['constructor', 'hasownproperty', 'valueof', 'tostring', 'zzz'])(
    'a custom role %s ranks below a built-in of the same priority',
    (custom) => {
      const claims = { groups: ['gis'] };
      expect(resolveRole([mapping(custom), mapping('viewer')], claims)).toBe('viewer');
      expect(resolveRole([mapping('viewer'), mapping(custom)], claims)).toBe('viewer');
      expect(resolveRole([mapping(custom, 1), mapping('admin')], claims)).toBe(custom);
    },
  );

  it.each([
    ...inherited.map((name) => [name, {}] as const),
    ['constructor.name', {}],
    ['__proto__.toString', {}],
    ['toString.name', {}],
    ['realm_access.constructor', { realm_access: { roles: ['a'] } }],
    ['realm_access.__proto__', { realm_access: { roles: ['a'] } }],
    ['realm_access.roles.length', { realm_access: { roles: ['a'] } }],
    ['name.length', { name: 'abc' }],
  ] as const)('the claim %j of %j has no values (nothing inherited is walked)', (name, claims) => {
    expect(claimValues(claims as Record<string, unknown>, name)).toEqual([]);
  });

  it('own claims named like built-ins are found, literally and by dotted path', () => {
    const claims = JSON.parse(
      '{"constructor":"a","__proto__":["b","c"],"realm_access":{"toString":"d","__proto__":{"x":"e"}}}',
    );
    expect(claimValues(claims, 'constructor')).toEqual(['a']);
    expect(claimValues(claims, '__proto__')).toEqual(['b', 'c']);
    expect(claimValues(claims, 'realm_access.toString')).toEqual(['d']);
    expect(claimValues(claims, 'realm_access.__proto__.x')).toEqual(['e']);
  });
});

describe('other tables keyed by client data', () => {
  it('parses cookies named like built-ins as ordinary cookies', () => {
    const cookies = parseCookies('constructor=a; __proto__=b; toString=c; toString=d');
    expect(Object.getPrototypeOf(cookies)).toBeNull();
    expect(Object.entries(cookies)).toEqual([
      ['constructor', 'a'],
      ['__proto__', 'b'],
      ['toString', 'c'],
    ]);
    expect(parseCookies('x=1').constructor).toBeUndefined();
    expect(parseCookies(undefined)['__Host-session']).toBeUndefined();
  });

  it.each([[['constructor', 'toString']], [['__proto__', 'valueOf']], [['PK', 'hasOwnProperty']]])(
    'refuses a cursor keyed %j (400 invalid_cursor)',
    (names) => {
      const cursor = Buffer.from(JSON.stringify(Object.fromEntries(names.map((n) => [n, 'x'])))).toString(
        'base64url',
      );
      expect(() => decodeCursor(cursor, { PK: { equals: 'x' }, SK: true })).toThrow(InvalidInputError);
    },
  );

  it('own() reads only own members; dictionary() has no prototype', () => {
    expect(own({}, 'constructor')).toBeUndefined();
    expect(own(JSON.parse('{"__proto__":1}'), '__proto__')).toBe(1);
    const table = dictionary<number>();
    const key = '__proto__';
    table[key] = 2;
    expect(Object.keys(table)).toEqual(['__proto__']);
    expect(table.toString).toBeUndefined();
  });
});

describe('makeHandler with query and header names like built-ins', () => {
  const fixture = JSON.parse(
    readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
  ) as APIGatewayProxyEvent;
  const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  const list = makeHandler(
    defineOperation({
      operationId: 'testList',
      method: 'GET',
      path: '/api/v1/things',
      handler: 'test',
      permission: 'global',
      summary: 'test',
      tags: ['test'],
      request: { query: z.strictObject({ limit: z.optional(z.string()) }) },
      responses: { 200: { description: 'ok' } },
      data: [],
    }),
    async ({ query, headers }) => ok({ query, constructorHeader: headers.constructor ?? null }),
  );

  it.each(inherited)('answers 400 for the unknown query parameter %s', async (name) => {
    const event = { ...structuredClone(fixture), httpMethod: 'GET', body: null };
    event.queryStringParameters = JSON.parse(`{"${name}":"1"}`);
    const result = await list(event, context);
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body).reason).toBe('validation_failed');
  });

  it('passes headers named like built-ins through as ordinary headers', async () => {
    const event = { ...structuredClone(fixture), httpMethod: 'GET', body: null };
    event.headers = { ...event.headers, ...JSON.parse('{"__proto__":"x","Constructor":"y"}') };
    const result = await list(event, context);
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body).constructorHeader).toBe('y');
  });
});
