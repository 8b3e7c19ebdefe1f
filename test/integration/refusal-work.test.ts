import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from '#domain/workspaces.ts';
import { serviceRecord, useHostStore } from '../support/store.ts';

/*
 * A caller without a role gets the same 403 for a missing workspace as for an existing one (DESIGN
 * §5); ADR 0109 makes the refusal do the same work too, so its time tells nothing: the very same
 * DynamoDB commands, with as many keys, in the authorizer and in the handler. The authorizer and
 * the handlers run in-process against the run's DynamoDB Local; every command is recorded.
 */

type Handler<E, R> = (event: E, context: Context) => Promise<R>;

interface Sent {
  command: string;
  /** How many keys a BatchGetItem asked for; the item count of a transaction. */
  size?: number;
}

const sent: Sent[] = [];
let authorizer: Handler<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>;
const handlers: Record<string, Handler<APIGatewayProxyEvent, APIGatewayProxyResult>> = {};
let repos: typeof import('#wiring/repositories.ts');
let apiKeys: typeof import('#domain/api-keys.ts');
let workspaces: typeof import('#domain/workspaces.ts');

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;
const context = { awsRequestId: 'rw', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const ISSUER = 'https://issuer.refusal-work.test';
const AUDIENCE = 'geoplane-refusal-work';
const OIDC_ENV = ['OIDC_ISSUER', 'OIDC_AUDIENCE', 'OIDC_JWKS'] as const;
const savedEnv = Object.fromEntries(OIDC_ENV.map((k) => [k, process.env[k]]));
let token = '';

afterAll(() => {
  for (const k of OIDC_ENV) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

beforeAll(async () => {
  useHostStore();
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'rw', alg: 'ES256', use: 'sig' };
  Object.assign(process.env, {
    OIDC_ISSUER: ISSUER,
    OIDC_AUDIENCE: AUDIENCE,
    OIDC_JWKS: JSON.stringify({ keys: [jwk] }),
  });
  token = await new SignJWT({ groups: ['nobody-maps-this'] })
    .setProtectedHeader({ alg: 'ES256', kid: 'rw' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(`rw-user-${randomUUID().slice(0, 8)}`)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
  const { documentClient } = await import('#store/client.ts');
  const { installDataAccessCheck, withDataAccess } = await import('#infra/local/data-access.ts');
  const { authorizerDataAccess, dataAccessOf, routes } = await import('#api/routes.ts');
  installDataAccessCheck(documentClient());
  documentClient().middlewareStack.add(
    (next, ctx) => async (args) => {
      const input = args.input as {
        RequestItems?: Record<string, { Keys?: unknown[] }>;
        TransactItems?: unknown[];
      };
      const size = input.RequestItems
        ? Object.values(input.RequestItems).reduce((n, t) => n + (t.Keys?.length ?? 0), 0)
        : input.TransactItems?.length;
      sent.push({ command: ctx.commandName ?? 'unknown', ...(size !== undefined ? { size } : {}) });
      return next(args);
    },
    { step: 'initialize', name: 'recordRefusalWork' },
  );
  repos = await import('#wiring/repositories.ts');
  apiKeys = await import('#domain/api-keys.ts');
  workspaces = await import('#domain/workspaces.ts');
  const { GLOBAL_SCOPE } = await import('#domain/claim-mappings.ts');
  await repos.claimMappingRepository().summarize(GLOBAL_SCOPE);
  const auth = (await import('../../functions/authorizer/index.ts')).handler;
  authorizer = (event) => withDataAccess('authorizer', authorizerDataAccess, () => auth(event));
  for (const operationId of ['getWorkspace', 'getService', 'listLayers', 'updateWorkspace']) {
    const op = routes.find((r) => r.operationId === operationId);
    if (!op) throw new Error(operationId);
    const fn = (await import(`../../${op.handler}`)).handler as Handler<
      APIGatewayProxyEvent,
      APIGatewayProxyResult
    >;
    handlers[operationId] = (event, ctx) =>
      withDataAccess(operationId, dataAccessOf(op), () => fn(event, ctx));
  }
});

const name = () => `rw-${randomUUID().slice(0, 13)}`;

/** A workspace with a service, and a viewer key of another workspace (no role in this one). */
async function stranger(): Promise<{ ws: Workspace; service: string; secret: string }> {
  const ws = await workspaces.createWorkspace(
    { workspaces: repos.workspaceRepository() },
    { body: { name: name() } },
  );
  const service = serviceRecord(ws.id, name());
  await repos.serviceRepository().create(service);
  const home = await workspaces.createWorkspace(
    { workspaces: repos.workspaceRepository() },
    { body: { name: name() } },
  );
  const { secret } = await apiKeys.createApiKey(
    { keys: repos.apiKeyRepository() },
    {
      workspaceId: home.id,
      body: {
        name: 'stranger',
        role_id: 'admin',
      },
    },
  );
  return { ws, service: service.name, secret };
}

/** One request through the authorizer and the handler: its status, reason and the commands each sent. */
async function request(
  operationId: string,
  method: 'GET' | 'PUT',
  params: Record<string, string>,
  headers: Record<string, string>,
) {
  const path = `/api/v1/workspaces/${params.workspace}${params.service ? `/services/${params.service}` : ''}${operationId === 'listLayers' ? '/layers' : ''}`;
  sent.length = 0;
  const result = await authorizer(
    {
      type: 'REQUEST',
      methodArn: `arn:aws:execute-api:local:000000000000:local/v1/${method}${path}`,
      resource: path,
      path,
      httpMethod: method,
      headers,
      multiValueHeaders: {},
      pathParameters: params,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      requestContext: {},
    } as unknown as APIGatewayRequestAuthorizerEvent,
    context,
  );
  const inAuthorizer = [...sent];
  sent.length = 0;
  const answer = await (handlers[operationId] as Handler<APIGatewayProxyEvent, APIGatewayProxyResult>)(
    {
      ...structuredClone(fixture),
      httpMethod: method,
      path,
      resource: path,
      body: method === 'PUT' ? JSON.stringify({ description: 'probe' }) : null,
      headers: { ...fixture.headers, ...headers },
      pathParameters: params,
      requestContext: {
        ...structuredClone(fixture.requestContext),
        httpMethod: method,
        authorizer: { ...result.context, principalId: result.principalId },
      },
    },
    context,
  );
  return {
    status: answer.statusCode,
    reason: (JSON.parse(answer.body || '{}') as { reason?: string }).reason,
    authorizer: inAuthorizer,
    handler: [...sent],
  };
}

describe('a refusal for want of a role does the same work whether the workspace exists or not (ADR 0109)', () => {
  const credentials = {
    'an API key': (secret: string) => ({ 'X-API-Key': secret }),
    'a token': () => ({ Authorization: `Bearer ${token}` }),
  };

  describe.each(Object.entries(credentials))('with %s', (_label, credential) => {
    type Params = (ws: Workspace, service: string) => Record<string, string>;
    it.each([
      // By id it always was one round trip either way; by name the existing one took two.
      [
        'getWorkspace by name, and by id',
        'getWorkspace',
        [(ws) => ({ workspace: ws.name }), (ws) => ({ workspace: ws.id })] as Params[],
      ],
      [
        'getService by name under a workspace by id',
        'getService',
        [(ws, svc) => ({ workspace: ws.id, service: svc })] as Params[],
      ],
      [
        'listLayers by names',
        'listLayers',
        [(ws, svc) => ({ workspace: ws.name, service: svc })] as Params[],
      ],
    ] as const)('%s', async (_case, operationId, shapes) => {
      const { ws, service, secret } = await stranger();
      const headers = credential(secret);
      for (const paramsOf of shapes) {
        const missingWs = { ...ws, id: randomUUID(), name: name() };
        const existing = await request(operationId, 'GET', paramsOf(ws, service), headers);
        const missing = await request(operationId, 'GET', paramsOf(missingWs, name()), headers);
        expect([existing.status, missing.status]).toEqual([403, 403]);
        expect(existing.reason).toBe('no_workspace_access');
        expect(missing.reason).toBe(existing.reason);
        expect(missing.authorizer).toEqual(existing.authorizer);
        expect(missing.handler).toEqual(existing.handler);
      }
    });
  });

  it('a refused change writes the same audit record, in the global trail, for either', {
    timeout: 30_000,
  }, async () => {
    const { ws, secret } = await stranger();
    const headers = { 'X-API-Key': secret };
    // Refusals are tallied per minute (ADR 0109): keep the three below within one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
    // The first refusal of the kind in its window writes the tally; compare the ones after it.
    await request('updateWorkspace', 'PUT', { workspace: name() }, headers);
    const existing = await request('updateWorkspace', 'PUT', { workspace: ws.name }, headers);
    const missing = await request('updateWorkspace', 'PUT', { workspace: name() }, headers);
    expect([existing.status, missing.status]).toEqual([403, 403]);
    expect(missing.authorizer).toEqual(existing.authorizer);
    expect(missing.handler).toEqual(existing.handler);
    // The refusal is counted on the tally the first one wrote: its transaction is the last command.
    expect(existing.handler.at(-1)?.command).toMatch(/^TransactWrite/);
  });
});
