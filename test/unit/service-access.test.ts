import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation, type Operation } from '#api/operation.ts';
import { targetContext } from '#auth/request-target.ts';
import type { AccessPorts } from '#auth/workspace-access.ts';
import type { Service } from '#domain/services.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { type HandlerRequest, makeHandler } from '#http/make-handler.ts';
import { ok } from '#http/responses.ts';

/**
 * `{service}` is resolved by the middleware stack, as `{workspace}` is (issue #28): the handler
 * gets `service`; a missing or deleted one is 404 before the handler runs; reads take the service
 * the authorizer carried, and so do changes that only name it; other changes read it afresh;
 * deleteService also resolves one being deleted.
 */

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const WS = '0190a6b2-0000-7000-8000-000000000001';
const workspace = { id: WS, name: 'roads', status: 'active', version: 1 } as unknown as Workspace;

function serviceOf(id: string, name: string, status: Service['status'] = 'active'): Service {
  return {
    id,
    workspace_id: WS,
    name,
    type: 'postgis',
    status,
    version: 4,
    password_enc: 'sealed',
  } as unknown as Service;
}

let services: Map<string, Service>;
let reads: string[];

const access = (): AccessPorts => ({
  workspaces: {
    findById: async (id: string) => (id === WS ? workspace : undefined),
    findByName: async (name: string) => (name === 'roads' ? workspace : undefined),
  } as unknown as AccessPorts['workspaces'],
  claimMappings: { all: async () => [] },
  roles: { listPolicies: async () => [] },
  services: {
    findById: async (workspaceId: string, id: string) => {
      reads.push(`id:${id}`);
      const s = services.get(id);
      return s?.workspace_id === workspaceId ? s : undefined;
    },
    findByName: async (workspaceId: string, name: string) => {
      reads.push(`name:${name}`);
      return [...services.values()].find((s) => s.workspace_id === workspaceId && s.name === name);
    },
  },
});

function operation(method: 'GET' | 'DELETE', extra: Partial<Operation> = {}) {
  return defineOperation({
    operationId: `svc${method}`,
    method,
    path: '/api/v1/workspaces/{workspace}/services/{service}',
    handler: 'test',
    permission: 'read',
    summary: 'test',
    tags: ['test'],
    request: { params: z.strictObject({ workspace: z.string(), service: z.string() }) },
    responses: { 200: { description: 'ok' } },
    data: [],
    ...extra,
  } as Parameters<typeof defineOperation>[0]);
}

function event(method: string, service: string, authorizer: Record<string, unknown> = {}) {
  const e = structuredClone(fixture);
  e.httpMethod = method;
  e.body = null;
  e.path = `/api/v1/workspaces/${WS}/services/${service}`;
  e.pathParameters = { workspace: WS, service };
  Object.assign(e.requestContext.authorizer as Record<string, unknown>, authorizer);
  return e;
}

/** The handler's view: what `service` it got (its name, version and password as it saw them). */
function seeing(op: Operation) {
  let calls = 0;
  const handler = makeHandler(
    op,
    async ({ service }: HandlerRequest<Operation>) => {
      calls++;
      return ok({ name: service.name, version: service.version, password: service.password_enc });
    },
    access,
  );
  return { handler, calls: () => calls };
}

const body = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>;

beforeEach(() => {
  services = new Map([
    ['0190a6b2-0000-7000-8000-0000000000aa', serviceOf('0190a6b2-0000-7000-8000-0000000000aa', 'roads-db')],
    [
      '0190a6b2-0000-7000-8000-0000000000bb',
      serviceOf('0190a6b2-0000-7000-8000-0000000000bb', 'old-db', 'deleting'),
    ],
  ]);
  reads = [];
});

/** The authorizer's context carrying roads-db at version 3 (the store holds it at version 4). */
const carriedRoadsDb = () =>
  targetContext({
    workspace: { idOrName: WS, workspace },
    service: {
      idOrName: 'roads-db',
      workspaceId: WS,
      service: { ...serviceOf('0190a6b2-0000-7000-8000-0000000000aa', 'roads-db'), version: 3 },
    },
  });

describe('{service} in the middleware stack', () => {
  it('gives the handler the service named by id or by name', async () => {
    const { handler } = seeing(operation('GET'));
    const byName = await handler(event('GET', 'roads-db'), context);
    expect(byName.statusCode, byName.body).toBe(200);
    expect(body(byName).name).toBe('roads-db');
    const byId = await handler(event('GET', '0190a6b2-0000-7000-8000-0000000000aa'), context);
    expect(body(byId).name).toBe('roads-db');
  });

  it('answers 404 service_not_found for a missing service, and the handler never runs', async () => {
    const { handler, calls } = seeing(operation('GET'));
    const res = await handler(event('GET', 'nothing-here'), context);
    expect(res.statusCode).toBe(404);
    expect(body(res).reason).toBe('service_not_found');
    expect(calls()).toBe(0);
  });

  it('hides a service being deleted, except from operations that resolve one (deleteService)', async () => {
    const plain = seeing(operation('DELETE'));
    const hidden = await plain.handler(event('DELETE', 'old-db'), context);
    expect(hidden.statusCode).toBe(404);
    expect(plain.calls()).toBe(0);
    const deleting = seeing(operation('DELETE', { resolvesDeletingService: true }));
    const found = await deleting.handler(event('DELETE', 'old-db'), context);
    expect(found.statusCode, found.body).toBe(200);
    expect(body(found).name).toBe('old-db');
  });

  it('a read takes the service the authorizer carried; a change reads it afresh', async () => {
    const carried = carriedRoadsDb();
    const read = await seeing(operation('GET')).handler(event('GET', 'roads-db', carried), context);
    expect(body(read)).toMatchObject({ name: 'roads-db', version: 3 });
    expect(body(read).password).not.toBe('sealed');
    expect(reads).toEqual([]);
    const change = await seeing(operation('DELETE')).handler(event('DELETE', 'roads-db', carried), context);
    expect(body(change)).toMatchObject({ name: 'roads-db', version: 4, password: 'sealed' });
    expect(reads).toContain('name:roads-db');
  });

  it('a change that only names its service (takesCarriedService) takes the carried one too', async () => {
    const carried = carriedRoadsDb();
    const naming = seeing(operation('DELETE', { takesCarriedService: true }));
    const change = await naming.handler(event('DELETE', 'roads-db', carried), context);
    expect(body(change)).toMatchObject({ name: 'roads-db', version: 3 });
    expect(body(change).password).not.toBe('sealed');
    expect(reads).toEqual([]);
    // Without the authorizer's record (too large to carry, or none): read as any change.
    const uncarried = await naming.handler(event('DELETE', 'roads-db'), context);
    expect(body(uncarried)).toMatchObject({ name: 'roads-db', password: 'sealed' });
    expect(reads).toContain('name:roads-db');
  });

  it('routes without {service} have none: reading it is a bug of the handler', async () => {
    const op = defineOperation({
      operationId: 'wsOnly',
      method: 'GET',
      path: '/api/v1/workspaces/{workspace}',
      handler: 'test',
      permission: 'read',
      summary: 'test',
      tags: ['test'],
      request: { params: z.strictObject({ workspace: z.string() }) },
      responses: { 200: { description: 'ok' } },
      data: [],
    });
    const handler = makeHandler(op, async ({ service }) => ok({ name: service.name }), access);
    const e = event('GET', 'x');
    e.path = `/api/v1/workspaces/${WS}`;
    e.pathParameters = { workspace: WS };
    const res = await handler(e, context);
    expect(res.statusCode).toBe(500);
    expect(reads).toEqual([]);
  });
});
