import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import xray from 'aws-xray-sdk-core';
import { afterAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import type { AccessPorts } from '#auth/workspace-access.ts';
import { ImportDatabase } from '#datasources/imports/database.ts';
import { POSTGIS_IMPORT_SESSION } from '#datasources/imports/database-connection.ts';
import { kmsEncrypt } from '#datasources/kms-secret-box.ts';
import { POSTGIS_READ_ONLY, readOnly } from '#datasources/postgis-sessions.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { makeHandler } from '#http/make-handler.ts';
import { ok } from '#http/responses.ts';
import { documentClient } from '#store/client.ts';
import { tracer } from '#telemetry/tracer.ts';

// As Lambda sets it up (ADR 0092): Powertools turns tracing on in a Lambda execution environment.
// Every AWS endpoint is a closed loopback port: calls fail fast, without a network.
vi.hoisted(() => {
  vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs20.x');
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
  vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'geoplane-test');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('DYNAMODB_ENDPOINT', 'http://127.0.0.1:1');
  vi.stubEnv('AWS_ENDPOINT_URL_KMS', 'http://127.0.0.1:1');
});

afterAll(() => {
  vi.unstubAllEnvs();
});

type Segment = InstanceType<typeof xray.Segment>;
type Node = { name: string; subsegments?: Node[] } & Record<string, unknown>;

/** Runs `work` with a fresh root segment as the current one (what Lambda's facade segment is). */
async function underRoot(work: () => Promise<unknown>): Promise<Segment> {
  const root = new xray.Segment('geoplane-test-root');
  await xray.getNamespace().runPromise(async () => {
    xray.setSegment(root);
    await work();
  });
  return root;
}

function children(node: { subsegments?: unknown[] }): Node[] {
  return (node.subsegments ?? []) as Node[];
}

/** A subsegment as X-Ray would receive it (what `close` and the flags left in it). */
function sent(node: Node): Record<string, unknown> {
  return JSON.parse(JSON.stringify(node)) as Record<string, unknown>;
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const workspace: Workspace = {
  id: '6c0b0f0e-3f3c-4a59-9d59-6f1b8f3d2c11',
  name: 'traced',
  status: 'active',
  version: 1,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

const access = (() => ({
  workspaces: { findById: async () => workspace, findByName: async () => workspace },
  claimMappings: { all: async () => [] },
  roles: { listPolicies: async () => [] },
})) as unknown as () => AccessPorts;

const operation = defineOperation({
  operationId: 'traceLookup',
  method: 'GET',
  path: '/api/v1/workspaces/{workspace}/lookup',
  handler: 'test',
  permission: 'read',
  summary: 'test',
  tags: ['test'],
  request: { params: z.object({ workspace: z.string() }), query: z.object({ fail: z.optional(z.string()) }) },
  responses: { 200: { description: 'ok' } },
  data: [],
});

const connection = { host: '127.0.0.1', port: 1, database: 'gis', user: 'reader', password: 'pw-of-reader' };

/** Reads an item and runs a PostGIS unit of work (both fail: nothing listens), then answers with a secret. */
const handler = makeHandler(
  operation,
  async ({ query }) => {
    if (query.fail) throw new Error('a bug');
    await documentClient()
      .send(new GetCommand({ TableName: 'geoplane', Key: { pk: 'WS#x', sk: 'META' } }))
      .catch(() => undefined);
    await readOnly(connection, 1_000, async (q) => q('SELECT 1')).catch(() => undefined);
    return ok({ key: 'gpk_this-answer-holds-a-created-key' });
  },
  access,
);

function event(query: Record<string, string> | null = null): APIGatewayProxyEvent {
  const e = structuredClone(fixture);
  return {
    ...e,
    httpMethod: 'GET',
    path: `/api/v1/workspaces/${workspace.name}/lookup`,
    resource: '/api/v1/workspaces/{workspace}/lookup',
    pathParameters: { workspace: workspace.name },
    queryStringParameters: query,
    body: null,
  };
}

describe('traces where tracing is on (ADR 0092)', () => {
  it('is on: the tracer is loaded and enabled', () => {
    expect(tracer?.isTracingEnabled()).toBe(true);
  });

  it('wraps a request in "## <operation>", annotated, with the DynamoDB call and the PostGIS unit of work inside', async () => {
    const root = await underRoot(async () => {
      const result = await handler(event(), context);
      expect(result.statusCode).toBe(200);
      // After the request its subsegment is no longer current: the next call lands on the root.
      await documentClient()
        .send(new GetCommand({ TableName: 'geoplane', Key: { pk: 'WS#y', sk: 'META' } }))
        .catch(() => undefined);
    });

    expect(children(root).map((s) => s.name)).toEqual(['## traceLookup', 'DynamoDB']);
    const [request] = children(root);
    expect(sent(request as Node)).toMatchObject({
      annotations: {
        operation: 'traceLookup',
        workspace: workspace.id,
        status: 200,
        ColdStart: true,
        Service: 'geoplane-test',
      },
    });
    expect(request?.in_progress).toBeFalsy();
    expect(request?.end_time).toBeTypeOf('number');
    const inner = children(request as Node);
    expect(inner.map((s) => s.name)).toEqual(['DynamoDB', POSTGIS_READ_ONLY]);
    expect(sent(inner[0] as Node)).toMatchObject({ namespace: 'aws', aws: { operation: 'GetItem' } });
    const postgis = sent(inner[1] as Node);
    expect(postgis).toMatchObject({ fault: true, annotations: { budget_ms: 1000 } });
    expect(postgis.end_time).toBeTypeOf('number');
    expect(postgis.in_progress).toBeFalsy();
    // Neither the answer nor a password reaches the trace.
    const whole = JSON.stringify(root);
    expect(whole).not.toContain('gpk_');
    expect(whole).not.toContain(connection.password);
  });

  it('flags a failed request as a fault without its message, and a refused one as an error', async () => {
    const root = await underRoot(async () => {
      expect((await handler(event({ fail: '1' }), context)).statusCode).toBe(500);
      const missing = event();
      missing.requestContext.authorizer = null;
      expect((await handler(missing, context)).statusCode).toBe(401);
    });

    const [failed, refused] = children(root).map(sent);
    expect(failed).toMatchObject({
      name: '## traceLookup',
      fault: true,
      annotations: { status: 500, ColdStart: false },
    });
    expect(JSON.stringify(failed)).not.toContain('a bug');
    expect(refused).toMatchObject({ name: '## traceLookup', error: true, annotations: { status: 401 } });
    expect(refused).not.toHaveProperty('fault');
  });

  it('captures the KMS client and the import database’s sessions', async () => {
    const root = await underRoot(async () => {
      await kmsEncrypt('alias/test', 'secret', { service: 's' }).catch(() => undefined);
      const db = new ImportDatabase(connection);
      await db.checkpoint('2b7f9a4e-1c1d-4c7e-9d0a-0a6f4a1f3e55', 'roads').catch(() => undefined);
    });

    const [kms, session] = children(root);
    expect(sent(kms as Node)).toMatchObject({ name: 'KMS', namespace: 'aws', aws: { operation: 'Encrypt' } });
    expect(sent(session as Node)).toMatchObject({ name: POSTGIS_IMPORT_SESSION, fault: true });
    expect(session?.end_time).toBeTypeOf('number');
  });
});

describe('traces where tracing is off', () => {
  it('loads no tracer outside Lambda, and leaves clients as they are', async () => {
    vi.stubEnv('AWS_EXECUTION_ENV', undefined);
    vi.resetModules();
    const off = await import('#telemetry/tracer.ts');
    const client = { middlewareStack: { use: () => {}, remove: () => {} } };

    expect(off.tracer).toBeUndefined();
    expect(off.captureClient(client)).toBe(client);
    expect(off.traceRequest('x')).toBeUndefined();
    expect(await off.inSubsegment('y', async () => 42)).toBe(42);
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs20.x');
  });

  it('is also off in Lambda when POWERTOOLS_TRACE_ENABLED=false', async () => {
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'false');
    vi.resetModules();
    const off = await import('#telemetry/tracer.ts');

    expect(off.tracer).toBeUndefined();
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', undefined);
  });
});
