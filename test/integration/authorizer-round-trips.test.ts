import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKey } from '#domain/api-keys.ts';
import { type Service, WITHHELD_SECRET } from '#domain/services.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { hostDynamo, layerRecord, serviceRecord, useHostStore } from '../support/store.ts';

// How many DynamoDB round trips a read makes after authentication (ADR 0099): the authorizer and
// the handler run in-process against the run's DynamoDB Local, every command the store sends is
// counted, and the handler gets the authorizer's context as API Gateway would hand it on.

type Handler<E, R> = (event: E, context: Context) => Promise<R>;

const sent: string[] = [];
/** The sort keys each BatchGetItem asked for, in the order sent. */
const batchKeys: string[][] = [];
let authorizer: Handler<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>;
let handlers: Record<string, Handler<APIGatewayProxyEvent, APIGatewayProxyResult>>;
let repos: typeof import('#wiring/repositories.ts');
let apiKeys: typeof import('#domain/api-keys.ts');
let workspaces: typeof import('#domain/workspaces.ts');

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

const context = { awsRequestId: 'it', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

// Bearer tokens of an issuer of this file's own (ADR 0103): set before the product reads its config.
const ISSUER = 'https://issuer.round-trips.test';
const AUDIENCE = 'geoplane-round-trips';
const OIDC_ENV = ['OIDC_ISSUER', 'OIDC_AUDIENCE', 'OIDC_JWKS'] as const;
const savedEnv = Object.fromEntries(OIDC_ENV.map((k) => [k, process.env[k]]));
let signToken: (claims: Record<string, unknown>) => Promise<string>;
let claimMappings: typeof import('#domain/claim-mappings.ts');
let keys: typeof import('#store/keys.ts').keys;
const db = hostDynamo();

afterAll(() => {
  for (const k of OIDC_ENV) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
  db.destroy();
});

beforeAll(async () => {
  useHostStore();
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'rt', alg: 'ES256', use: 'sig' };
  Object.assign(process.env, {
    OIDC_ISSUER: ISSUER,
    OIDC_AUDIENCE: AUDIENCE,
    OIDC_JWKS: JSON.stringify({ keys: [jwk] }),
  });
  signToken = (claims) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'rt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(`rt-user-${randomUUID().slice(0, 8)}`)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  claimMappings = await import('#domain/claim-mappings.ts');
  keys = (await import('#store/keys.ts')).keys;
  const { documentClient } = await import('#store/client.ts');
  // The local host's IAM stand-in too: the authorizer's BatchGetItem must be declared in its data.
  const { installDataAccessCheck, withDataAccess } = await import('#infra/local/data-access.ts');
  const { authorizerDataAccess, dataAccessOf, routes } = await import('#api/routes.ts');
  installDataAccessCheck(documentClient());
  documentClient().middlewareStack.add(
    (next, ctx) => async (args) => {
      sent.push(ctx.commandName ?? 'unknown');
      if (ctx.commandName === 'BatchGetItemCommand') {
        const items = (args.input as { RequestItems?: Record<string, { Keys?: { SK?: string }[] }> })
          .RequestItems;
        batchKeys.push(Object.values(items ?? {}).flatMap((t) => (t.Keys ?? []).map((k) => String(k.SK))));
      }
      return next(args);
    },
    { step: 'initialize', name: 'countRoundTrips' },
  );
  repos = await import('#wiring/repositories.ts');
  apiKeys = await import('#domain/api-keys.ts');
  workspaces = await import('#domain/workspaces.ts');
  await repos.claimMappingRepository().summarize(claimMappings.GLOBAL_SCOPE);
  const auth = (await import('../../functions/authorizer/index.ts')).handler;
  authorizer = (event) => withDataAccess('authorizer', authorizerDataAccess, () => auth(event));
  handlers = {};
  for (const operationId of ['getWorkspace', 'listLayers', 'getService', 'listServices', 'deleteLayer']) {
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

const name = () => `rt-${randomUUID().slice(0, 13)}`;

async function fixtureWorkspace(): Promise<{ ws: Workspace; service: Service; secret: string; key: ApiKey }> {
  const ws = await workspaces.createWorkspace(
    { workspaces: repos.workspaceRepository() },
    { body: { name: name() } },
  );
  const service = serviceRecord(ws.id, name());
  await repos.serviceRepository().create(service);
  const { key, secret } = await apiKeys.createApiKey(
    { keys: repos.apiKeyRepository() },
    {
      workspaceId: ws.id,
      body: {
        name: 'reader',
        role_id: 'viewer',
      },
    },
  );
  return { ws, service, secret, key };
}

/** Maps the `groups` claim's `value` to `role` in the workspace. */
function mapGroup(ws: Workspace, value: string, role: string) {
  return claimMappings.createClaimMapping(
    { mappings: repos.claimMappingRepository(), roles: repos.roleRepository() },
    { scope: ws.id, body: { claim_name: 'groups', claim_value: value, role_id: role } },
  );
}

/** One request through the authorizer and the handler; the commands each sent. */
async function request(
  operationId: string,
  path: string,
  params: Record<string, string>,
  headers: Record<string, string>,
  method = 'GET',
) {
  sent.length = 0;
  const authEvent = {
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
  } as unknown as APIGatewayRequestAuthorizerEvent;
  let result: APIGatewayAuthorizerResult;
  try {
    result = await authorizer(authEvent, context);
  } catch (error) {
    return {
      status: (error as Error).message === 'Unauthorized' ? 401 : 503,
      authorizer: [...sent],
      handler: [],
    };
  }
  const inAuthorizer = [...sent];
  sent.length = 0;
  const event: APIGatewayProxyEvent = {
    ...structuredClone(fixture),
    httpMethod: method,
    path,
    resource: path,
    body: null,
    headers: { ...fixture.headers, ...headers },
    pathParameters: params,
    requestContext: {
      ...structuredClone(fixture.requestContext),
      httpMethod: method,
      authorizer: { ...result.context, principalId: result.principalId },
    },
  };
  const answer = await (handlers[operationId] as Handler<APIGatewayProxyEvent, APIGatewayProxyResult>)(
    event,
    context,
  );
  return {
    status: answer.statusCode,
    body: JSON.parse(answer.body || '{}') as Record<string, unknown>,
    authorizer: inAuthorizer,
    handler: [...sent],
  };
}

describe('round trips of a read after authentication (ADR 0099)', () => {
  it('getWorkspace by id with an API key: one BatchGetItem in the authorizer, nothing more in the handler', async () => {
    const { ws, secret } = await fixtureWorkspace();
    const r = await request(
      'getWorkspace',
      `/api/v1/workspaces/${ws.id}`,
      { workspace: ws.id },
      { 'X-API-Key': secret },
    );
    expect(r.status).toBe(200);
    expect(r.body?.id).toBe(ws.id);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual([]);
  });

  it('getWorkspace by name: two BatchGetItems in the authorizer (the name marker, then the workspace), none in the handler', async () => {
    const { ws, secret } = await fixtureWorkspace();
    const r = await request(
      'getWorkspace',
      `/api/v1/workspaces/${ws.name}`,
      { workspace: ws.name },
      { 'X-API-Key': secret },
    );
    expect(r.status).toBe(200);
    expect(r.body?.name).toBe(ws.name);
    expect(r.authorizer).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    expect(r.handler).toEqual([]);
  });

  it('listLayers by ids: one BatchGetItem (key, workspace, service) and only its own Query', async () => {
    const { ws, service, secret } = await fixtureWorkspace();
    const path = `/api/v1/workspaces/${ws.id}/services/${service.id}/layers`;
    const r = await request(
      'listLayers',
      path,
      { workspace: ws.id, service: service.id },
      { 'X-API-Key': secret },
    );
    expect(r.status).toBe(200);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual(['QueryCommand']);
  });

  it('listServices by id: one BatchGetItem (key, workspace) and only its own Query', async () => {
    const { ws, service, secret } = await fixtureWorkspace();
    const path = `/api/v1/workspaces/${ws.id}/services`;
    const r = await request('listServices', path, { workspace: ws.id }, { 'X-API-Key': secret });
    expect(r.status).toBe(200);
    expect((r.body as { services: { id: string }[] }).services.map((x) => x.id)).toEqual([service.id]);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual(['QueryCommand']);
  });

  it('getService says a password is configured without the authorizer carrying it', async () => {
    const { ws, service, secret } = await fixtureWorkspace();
    const path = `/api/v1/workspaces/${ws.id}/services/${service.name}`;
    const r = await request(
      'getService',
      path,
      { workspace: ws.id, service: service.name },
      { 'X-API-Key': secret },
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: service.id, configured_secrets: ['password'] });
    // By name: the marker in the first round, the service in the second.
    expect(r.authorizer).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    expect(r.handler).toEqual([]);
  });

  it('answers 404 for a missing service of a workspace the caller reads, without reading it again', async () => {
    const { ws, secret } = await fixtureWorkspace();
    const missing = randomUUID();
    const path = `/api/v1/workspaces/${ws.id}/services/${missing}`;
    const r = await request(
      'getService',
      path,
      { workspace: ws.id, service: missing },
      { 'X-API-Key': secret },
    );
    expect(r.status).toBe(404);
    expect(r.body?.reason).toBe('service_not_found');
    expect(r.handler).toEqual([]);
  });

  it('gives a caller without a role 403 for a missing and for an existing workspace alike', async () => {
    const { secret } = await fixtureWorkspace();
    const other = await fixtureWorkspace();
    const missing = randomUUID();
    const a = await request(
      'getWorkspace',
      `/api/v1/workspaces/${missing}`,
      { workspace: missing },
      { 'X-API-Key': secret },
    );
    const b = await request(
      'getWorkspace',
      `/api/v1/workspaces/${other.ws.id}`,
      { workspace: other.ws.id },
      { 'X-API-Key': secret },
    );
    expect([a.status, b.status]).toEqual([403, 403]);
    expect(a.body?.reason).toBe(b.body?.reason);
  });

  it('refuses a revoked key on the very next request (the credential is read in the same BatchGetItem)', async () => {
    const { ws, secret, key } = await fixtureWorkspace();
    const path = `/api/v1/workspaces/${ws.id}`;
    expect((await request('getWorkspace', path, { workspace: ws.id }, { 'X-API-Key': secret })).status).toBe(
      200,
    );
    await repos.apiKeyRepository().revoke(key, new Date().toISOString());
    const r = await request('getWorkspace', path, { workspace: ws.id }, { 'X-API-Key': secret });
    expect(r.status).toBe(401);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
  });

  it('keeps a route without a path workspace on the plain credential GetItem', async () => {
    const { secret } = await fixtureWorkspace();
    sent.length = 0;
    await expect(
      authorizer(
        {
          type: 'REQUEST',
          methodArn: 'arn:aws:execute-api:local:000000000000:local/v1/GET/api/v1/workspaces',
          httpMethod: 'GET',
          headers: { 'X-API-Key': secret },
          pathParameters: null,
        } as unknown as APIGatewayRequestAuthorizerEvent,
        context,
      ),
    ).resolves.toMatchObject({
      context: expect.not.objectContaining({ workspaceLookup: expect.anything() }),
    });
    expect(sent).toEqual(['GetItemCommand']);
  });

  it('getWorkspace by a token whose workspace mapping makes it a viewer: one BatchGetItem, nothing in the handler (ADR 0103)', async () => {
    const { ws } = await fixtureWorkspace();
    const group = `rt-viewers-${randomUUID().slice(0, 8)}`;
    const mapping = await mapGroup(ws, group, 'viewer');
    const token = await signToken({ groups: ['someone-else', group] });
    const path = `/api/v1/workspaces/${ws.id}`;
    const r = await request('getWorkspace', path, { workspace: ws.id }, { Authorization: `Bearer ${token}` });
    expect(r.status).toBe(200);
    expect(r.body?.id).toBe(ws.id);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual([]);

    // The mapping's deletion is in the summary read by the very next request.
    await claimMappings.deleteClaimMapping(
      { mappings: repos.claimMappingRepository() },
      { scope: ws.id, mappingId: mapping.id },
    );
    const after = await request(
      'getWorkspace',
      path,
      { workspace: ws.id },
      { Authorization: `Bearer ${token}` },
    );
    expect(after.status).toBe(403);
    expect(after.authorizer).toEqual(['BatchGetItemCommand']);
  });

  it('a session made from an API key reads no claim mapping summary; a token’s session reads both (ADR 0103)', async () => {
    const { ws, secret, key } = await fixtureWorkspace();
    const { newSession } = await import('#domain/sessions.ts');
    const path = `/api/v1/workspaces/${ws.id}`;
    const viaSession = async (credential: Parameters<typeof newSession>[0]) => {
      const issued = newSession(credential, 3600, 3600, new Date());
      await repos.sessionRepository().create(issued.session);
      batchKeys.length = 0;
      const r = await request(
        'getWorkspace',
        path,
        { workspace: ws.id },
        { Cookie: `__Host-session=${issued.token}` },
      );
      return { ...r, keys: batchKeys.flat() };
    };

    const byKey = await viaSession({ type: 'apikey', key_hash: apiKeys.hashApiKey(secret), key_id: key.id });
    expect(byKey.status).toBe(200);
    expect(byKey.keys.length).toBeGreaterThan(0);
    expect(byKey.keys).not.toContain('CLAIMMAPS');

    const group = `rt-session-${randomUUID().slice(0, 8)}`;
    await mapGroup(ws, group, 'viewer');
    const byToken = await viaSession({ type: 'jwt', sub: 'rt-session-user', claims: { groups: [group] } });
    expect(byToken.status).toBe(200);
    expect(byToken.keys.filter((k) => k === 'CLAIMMAPS')).toHaveLength(2);
    expect(byToken.handler).toEqual([]);
  });

  it('a token whose claims match no mapping of the workspace: 403 from the same single read', async () => {
    const { ws } = await fixtureWorkspace();
    await mapGroup(ws, `rt-${randomUUID().slice(0, 8)}`, 'admin');
    const token = await signToken({ groups: ['not-mapped'] });
    const r = await request(
      'getWorkspace',
      `/api/v1/workspaces/${ws.id}`,
      { workspace: ws.id },
      { Authorization: `Bearer ${token}` },
    );
    expect(r.status).toBe(403);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual([]);
  });

  it('a workspace without its summary (mappings older than summaries): the handler queries them, with the same answer', async () => {
    const { ws } = await fixtureWorkspace();
    const group = `rt-editors-${randomUUID().slice(0, 8)}`;
    await mapGroup(ws, group, 'editor');
    await db.send(
      new DeleteCommand({
        TableName: process.env.TABLE_NAME,
        Key: keys.claimMappingSummary(ws.id),
      }),
    );
    const token = await signToken({ groups: [group] });
    const r = await request(
      'getWorkspace',
      `/api/v1/workspaces/${ws.id}`,
      { workspace: ws.id },
      { Authorization: `Bearer ${token}` },
    );
    expect(r.status).toBe(200);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    expect(r.handler).toEqual(['QueryCommand']);
  });
});

describe('a change that only names its service takes the one the authorizer read (ADR 0099)', () => {
  /** A workspace with a service, a layer of it and an editor's API key. */
  async function withLayer() {
    const { ws, service } = await fixtureWorkspace();
    const { secret } = await apiKeys.createApiKey(
      { keys: repos.apiKeyRepository() },
      { workspaceId: ws.id, body: { name: 'editor', role_id: 'editor' } },
    );
    const layer = layerRecord(service, name(), { title: 'Roads' });
    await repos.layerRepository().create(layer);
    return { ws, service, layer, secret };
  }

  it("deleteLayer: the authorizer's BatchGetItem, then only the layer and the deletion", async () => {
    const { ws, service, layer, secret } = await withLayer();
    const path = `/api/v1/workspaces/${ws.id}/services/${service.id}/layers/${layer.id}`;
    const r = await request(
      'deleteLayer',
      path,
      { workspace: ws.id, service: service.id, layer: layer.id },
      { 'X-API-Key': secret },
      'DELETE',
    );
    expect(r.status).toBe(204);
    expect(r.authorizer).toEqual(['BatchGetItemCommand']);
    // The layer read and the transaction: the service is not read again.
    expect(r.handler).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
    expect(await repos.layerRepository().find(ws.id, service.id, layer.id)).toBeUndefined();
  });

  it("deleteLayer of a service that does not exist: 404 from the authorizer's read alone", async () => {
    const { ws, layer, secret } = await withLayer();
    const missing = randomUUID();
    const r = await request(
      'deleteLayer',
      `/api/v1/workspaces/${ws.id}/services/${missing}/layers/${layer.id}`,
      { workspace: ws.id, service: missing, layer: layer.id },
      { 'X-API-Key': secret },
      'DELETE',
    );
    expect(r.status).toBe(404);
    expect(r.body?.reason).toBe('service_not_found');
    // No read of the service: only the refusal's tally is written (ADR 0109).
    expect(r.handler).toEqual(['TransactWriteItemsCommand']);
  });

  it('the store never writes back a service whose password was withheld', async () => {
    const { service } = await fixtureWorkspace();
    const carried = { ...service, password_enc: WITHHELD_SECRET };
    await expect(
      repos
        .serviceRepository()
        .update(carried, { ...carried, name: `${service.name}-2`, version: 2 } as Service),
    ).rejects.toThrow(/without its secret/);
    const stored = await repos.serviceRepository().findById(service.workspace_id, service.id);
    expect(stored?.password_enc).toBe(service.password_enc);
  });
});
