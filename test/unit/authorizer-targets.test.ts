import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { AuthPorts } from '#auth/authenticate.ts';
import { authorizeRequest } from '#auth/authorizer.ts';
import { SESSION_COOKIE } from '#auth/cookies.ts';
import { fromContext } from '#auth/principal.ts';
import { knownTargets, MAX_TARGET_JSON, targetContext, targetOf } from '#auth/request-target.ts';
import {
  type ApiKeyCredential,
  type ApiKeyRepository,
  hashApiKey,
  newApiKeySecret,
} from '#domain/api-keys.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import type { TargetLookup, TargetQuery, TargetRecords } from '#domain/request-targets.ts';
import { requireService, type Service, WITHHELD_SECRET } from '#domain/services.ts';
import { hashSecret, type Session, type SessionRepository } from '#domain/sessions.ts';
import { resolveWorkspace, type Workspace, type WorkspaceRepository } from '#domain/workspaces.ts';

const WS_ID = '6f1c1d3e-8b0e-4a57-9f6c-1f5d2e1b7a10';
const SVC_ID = '7a2d2e4f-9c1f-4b68-8a7d-2a6e3f2c8b21';

const workspace: Workspace = {
  id: WS_ID,
  name: 'roads',
  status: 'active',
  version: 3,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-02T00:00:00Z',
};

const service: Service = {
  id: SVC_ID,
  workspace_id: WS_ID,
  name: 'pg',
  type: 'postgis',
  connection: { host: 'db', port: 5432, database: 'gis', user: 'u' },
  password_enc: 'sealed-secret-bytes',
  enabled: true,
  status: 'active',
  version: 1,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

function credential(extra: Partial<ApiKeyCredential> = {}): ApiKeyCredential {
  return { key_id: 'k1', role_id: 'viewer', revoked: false, name: 'ci', workspace_id: WS_ID, ...extra };
}

/** Ports that count their reads; the target lookup answers with `records`. */
function fakes(secret: string, records: (q: TargetQuery) => Promise<TargetRecords>, session?: Session) {
  const calls = { lookUp: [] as TargetQuery[], credentialGets: 0, sessionGets: 0 };
  const ports: AuthPorts = {
    apiKeys: {
      findCredentialByHash: async (hash: string) => {
        calls.credentialGets++;
        return hash === hashApiKey(secret) ? credential() : undefined;
      },
    } as unknown as ApiKeyRepository,
    claimMappings: { all: async () => [] } as unknown as ClaimMappingRepository,
    sessions: {
      findByTokenHash: async () => {
        calls.sessionGets++;
        return session;
      },
    } as unknown as SessionRepository,
  };
  const targets: TargetLookup = {
    lookUp: (q) => {
      calls.lookUp.push(q);
      return records(q);
    },
  };
  return { ports, targets, calls };
}

/** A usable session made from the API key `secret`, found by `token`. */
function apiKeySession(secret: string, token: string): Session {
  return {
    session_id: 's1',
    token_hash: hashSecret(token),
    csrf_hash: hashSecret('csrf'),
    credential: { type: 'apikey', key_hash: hashApiKey(secret) },
    expires_at: '2999-01-01T00:00:00Z',
    idle_expires_at: '2999-01-01T00:00:00Z',
    created_at: '2026-01-01T00:00:00Z',
  } as Session;
}

function authEvent(
  headers: Record<string, string>,
  pathParameters: Record<string, string> | null,
): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api/v1/GET/api/v1/workspaces/x',
    httpMethod: 'GET',
    headers,
    pathParameters,
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

describe('the authorizer reads the credential with the path targets (ADR 0099)', () => {
  const secret = newApiKeySecret();

  it('asks one lookup for the key hash, the workspace and the service, and hands them on in the context', async () => {
    // Prepare
    const { ports, targets, calls } = fakes(secret, async (q) => ({
      ...(q.keyHash === hashApiKey(secret) ? { credential: credential() } : {}),
      workspace: { idOrName: WS_ID, workspace },
      service: { workspaceId: WS_ID, idOrName: 'pg', service },
    }));
    // Act
    const result = await authorizeRequest(
      authEvent({ 'X-API-Key': secret }, { workspace: WS_ID, service: 'pg' }),
      ports,
      targets,
    );
    // Assess
    expect(calls.lookUp).toEqual([{ keyHash: hashApiKey(secret), workspace: WS_ID, service: 'pg' }]);
    expect(calls.credentialGets).toBe(0);
    const known = knownTargets({ ...result.context, principalId: result.principalId });
    expect(known.workspace).toEqual({ idOrName: WS_ID, workspace });
    expect(known.service?.service?.id).toBe(SVC_ID);
    expect(JSON.stringify(result.context)).not.toContain('sealed-secret-bytes');
    expect(known.service?.service?.password_enc).toBe(WITHHELD_SECRET);
  });

  it.each([
    ['revoked', credential({ revoked: true })],
    ['expired', credential({ expires_at: '2020-01-01T00:00:00Z' })],
    ['unknown', undefined],
  ])('refuses a %s key read in that lookup with 401', async (_case, found) => {
    const { ports, targets } = fakes(secret, async () => ({
      ...(found ? { credential: found } : {}),
      workspace: { idOrName: WS_ID, workspace },
    }));
    await expect(
      authorizeRequest(authEvent({ 'X-API-Key': secret }, { workspace: WS_ID }), ports, targets),
    ).rejects.toThrow('Unauthorized');
  });

  it('fails (503, not 401) when the lookup of an API key fails', async () => {
    const { ports, targets } = fakes(secret, async () => {
      throw new Error('store down');
    });
    await expect(
      authorizeRequest(authEvent({ 'X-API-Key': secret }, { workspace: WS_ID }), ports, targets),
    ).rejects.toThrow('store down');
  });

  it('refuses a malformed key before reading anything', async () => {
    const { ports, targets, calls } = fakes(secret, async () => ({}));
    await expect(
      authorizeRequest(authEvent({ 'X-API-Key': 'gpk_short' }, { workspace: WS_ID }), ports, targets),
    ).rejects.toThrow('Unauthorized');
    expect(calls.lookUp).toEqual([]);
  });

  it('uses the plain credential read on routes without a workspace', async () => {
    const { ports, targets, calls } = fakes(secret, async () => ({}));
    const result = await authorizeRequest(authEvent({ 'X-API-Key': secret }, null), ports, targets);
    expect(calls).toMatchObject({ lookUp: [], credentialGets: 1 });
    expect(result.context).not.toHaveProperty('workspaceLookup');
  });

  describe('a session (or token) request', () => {
    const token = 'session-token-value';
    const session = apiKeySession(secret, token);
    const cookie = { Cookie: `${SESSION_COOKIE}=${token}` };

    it('reads the targets beside the authentication and carries them', async () => {
      const { ports, targets, calls } = fakes(
        secret,
        async () => ({ workspace: { idOrName: 'roads', workspace } }),
        session,
      );
      const result = await authorizeRequest(authEvent(cookie, { workspace: 'roads' }), ports, targets);
      // A session made from an API key asks for no claim mapping summaries: its roles are the
      // key's (a token's session does, ADR 0103; test/integration/authorizer-round-trips.test.ts).
      expect(calls.lookUp).toEqual([{ workspace: 'roads' }]);
      expect(knownTargets({ ...result.context }).workspace?.workspace?.id).toBe(WS_ID);
    });

    it('loses only the shortcut when the target lookup fails', async () => {
      const { ports, targets } = fakes(
        secret,
        async () => {
          throw new Error('throttled');
        },
        session,
      );
      const result = await authorizeRequest(authEvent(cookie, { workspace: 'roads' }), ports, targets);
      expect(result.principalId).toBe('apikey:k1');
      expect(result.context).not.toHaveProperty('workspaceLookup');
    });

    it('answers 401 for a missing session or a forged token without reading the targets', async () => {
      const { ports, targets, calls } = fakes(secret, async () => ({
        workspace: { idOrName: 'roads', workspace },
      }));
      await expect(
        authorizeRequest(authEvent(cookie, { workspace: 'roads' }), ports, targets),
      ).rejects.toThrow('Unauthorized');
      await expect(
        authorizeRequest(
          authEvent({ Authorization: 'Bearer not.a.token' }, { workspace: 'roads' }),
          ports,
          targets,
        ),
      ).rejects.toThrow('Unauthorized');
      expect(calls.lookUp).toEqual([]);
    });
  });
});

describe('the usage key a request is metered on (ADR 0111)', () => {
  const secret = newApiKeySecret();
  const GLOBAL = 'global-usage-key-of-this-test';
  process.env.GLOBAL_USAGE_KEY = GLOBAL;
  const other: Workspace = { ...workspace, id: 'a8b7c6d5-0000-4000-8000-000000000002', name: 'rivers' };
  const keyed = (ws: Workspace, key: string): Workspace => ({ ...ws, usage_slot: 1, usage_key: key });
  const byName: Record<string, Workspace> = {
    roads: keyed(workspace, 'usage-key-of-roads-xxxxx'),
    rivers: keyed(other, 'usage-key-of-rivers-xxxx'),
  };
  const lookup = async (q: TargetQuery): Promise<TargetRecords> => ({
    ...(q.keyHash === hashApiKey(secret) ? { credential: credential() } : {}),
    ...(q.workspace ? { workspace: { idOrName: q.workspace, workspace: byName[q.workspace] } } : {}),
  });
  const session = apiKeySession(secret, 'session-token');

  it.each([
    ['an API key', { 'X-API-Key': secret }],
    ['a session', { Cookie: `${SESSION_COOKIE}=session-token` }],
  ])(
    "meters %s on the key of the path's workspace, a different one per workspace",
    async (_caller, headers) => {
      const { ports, targets } = fakes(secret, lookup, session);
      const roads = await authorizeRequest(authEvent(headers, { workspace: 'roads' }), ports, targets);
      const rivers = await authorizeRequest(authEvent(headers, { workspace: 'rivers' }), ports, targets);
      expect(roads.usageIdentifierKey).toBe('usage-key-of-roads-xxxxx');
      expect(rivers.usageIdentifierKey).toBe('usage-key-of-rivers-xxxx');
    },
  );

  it('meters a call outside any workspace, and one whose workspace does not exist, on the global key', async () => {
    const { ports, targets } = fakes(secret, lookup, session);
    const global = await authorizeRequest(authEvent({ 'X-API-Key': secret }, null), ports, targets);
    const unknown = await authorizeRequest(
      authEvent({ 'X-API-Key': secret }, { workspace: 'nope' }),
      ports,
      targets,
    );
    expect(global.usageIdentifierKey).toBe(GLOBAL);
    expect(unknown.usageIdentifierKey).toBe(GLOBAL);
  });

  it('puts no usage key in the context a handler sees', async () => {
    const { ports, targets } = fakes(secret, lookup, session);
    const result = await authorizeRequest(
      authEvent({ 'X-API-Key': secret }, { workspace: 'roads' }),
      ports,
      targets,
    );
    expect(result.context).not.toHaveProperty('usageKey');
  });
});

describe('data-plane requests without a credential (ADR 0120, 0123)', () => {
  const secret = newApiKeySecret();
  const keyedRoads: Workspace = { ...workspace, usage_slot: 1, usage_key: 'usage-key-of-roads-xxxxx' };
  const lookup = async (q: TargetQuery): Promise<TargetRecords> => ({
    ...(q.keyHash === hashApiKey(secret) ? { credential: credential() } : {}),
    ...(q.workspace ? { workspace: { idOrName: q.workspace, workspace: keyedRoads } } : {}),
  });
  const dataEvent = (
    headers: Record<string, string>,
    resource = '/workspaces/{workspace}/ogc/collections',
  ) => ({
    ...authEvent(headers, { workspace: 'roads' }),
    resource,
  });

  it.each([
    ['no header at all', {}],
    ['only cookies that are not the session', { Cookie: 'theme=dark; other=1' }],
  ])('lets %s through as anonymous, metered on its workspace key', async (_case, headers) => {
    const { ports, targets, calls } = fakes(secret, lookup);
    const result = await authorizeRequest(dataEvent(headers), ports, targets);
    expect(result.principalId).toBe('anonymous');
    expect(result.context).toMatchObject({ anonymous: 'true' });
    expect(fromContext({ ...result.context, principalId: result.principalId })).toBeUndefined();
    expect(result.usageIdentifierKey).toBe('usage-key-of-roads-xxxxx');
    expect(calls.credentialGets + calls.sessionGets).toBe(0);
  });

  it.each([
    ['a garbage key', { 'X-API-Key': 'gp_nonsense' }],
    ['an empty key', { 'X-API-Key': '' }],
    ['a bad bearer', { Authorization: 'Bearer x.y.z' }],
    ['an unknown session', { Cookie: `${SESSION_COOKIE}=nope` }],
  ])('refuses %s with 401: a sent credential is never read as anonymous', async (_case, headers) => {
    const { ports, targets } = fakes(secret, lookup);
    await expect(authorizeRequest(dataEvent(headers), ports, targets)).rejects.toThrow('Unauthorized');
  });

  it('still refuses a management request without a credential', async () => {
    const { ports, targets } = fakes(secret, lookup);
    const management = dataEvent({}, '/api/v1/workspaces/{workspace}');
    await expect(authorizeRequest(management, ports, targets)).rejects.toThrow('Unauthorized');
  });
});

describe('the authorizer context of the targets', () => {
  it('decodes path parameters as makeHandler does, and takes a service only under a workspace', () => {
    expect(targetOf({ workspace: 'my%2Dws', service: 'pg' })).toEqual({ workspace: 'my-ws', service: 'pg' });
    expect(targetOf({ service: 'pg' })).toEqual({});
    expect(targetOf(null)).toEqual({});
  });

  it('carries a missing workspace as known-missing', () => {
    const ctx = targetContext({ workspace: { idOrName: 'nope', workspace: undefined } });
    expect(knownTargets(ctx)).toEqual({ workspace: { idOrName: 'nope', workspace: undefined } });
  });

  it('carries nothing undecided, and nothing over the bound (the handler reads it)', () => {
    expect(targetContext(undefined)).toEqual({});
    expect(
      targetContext({ credential: { key_id: 'k', role_id: 'viewer', revoked: false, name: 'n' } }),
    ).toEqual({});
    const big = { ...workspace, description: 'x'.repeat(MAX_TARGET_JSON) };
    expect(targetContext({ workspace: { idOrName: WS_ID, workspace: big } })).toEqual({});
  });

  it('ignores context values that are not what the authorizer writes', () => {
    expect(knownTargets(undefined)).toEqual({});
    expect(knownTargets({ workspaceLookup: 'not json' })).toEqual({});
    expect(knownTargets({ workspaceLookup: JSON.stringify({ p: WS_ID, v: { id: 1 } }) })).toEqual({});
    expect(knownTargets({ workspaceLookup: JSON.stringify({ v: workspace }) })).toEqual({});
  });
});

describe("a token caller's role from the workspace's mapping summary (ADR 0103)", () => {
  const rules = [
    { claim_name: 'groups', claim_value: 'gis', role_id: 'viewer', priority: 0 },
    { claim_name: 'groups', claim_value: 'gis-admins', role_id: 'admin', priority: 5 },
  ];
  const records = (workspaceId: string): TargetRecords => ({
    workspace: { idOrName: 'roads', workspace },
    workspaceRules: { workspaceId, rules },
  });

  it('carries the role the claims earn there, and null when none matches', () => {
    const admin = knownTargets(targetContext(records(WS_ID), { groups: ['gis', 'gis-admins'] }));
    expect(admin.claimRole).toEqual({ workspaceId: WS_ID, role: 'admin' });
    const none = knownTargets(targetContext(records(WS_ID), { groups: ['other'] }));
    expect(none.claimRole).toEqual({ workspaceId: WS_ID });
  });

  it('carries nothing for rules of another workspace, or for a caller without claims (an API key)', () => {
    expect(knownTargets(targetContext(records(SVC_ID), { groups: ['gis'] })).claimRole).toBeUndefined();
    expect(knownTargets(targetContext(records(WS_ID))).claimRole).toBeUndefined();
  });

  it('ignores a claimRole value the authorizer did not write', () => {
    const ctx = targetContext(records(WS_ID), { groups: ['gis'] });
    for (const bad of ['{"w":1,"r":"admin"}', '{"w":"x","r":7}', 'not json', '[]']) {
      expect(knownTargets({ ...ctx, claimRole: bad }).claimRole).toBeUndefined();
    }
  });
});

describe('resolution with what the authorizer read', () => {
  const unreadable: WorkspaceRepository = new Proxy({} as WorkspaceRepository, {
    get: () => () => {
      throw new Error('read although known');
    },
  });

  it('uses a known workspace of the same parameter without reading', async () => {
    expect(await resolveWorkspace(unreadable, 'roads', false, { idOrName: 'roads', workspace })).toBe(
      workspace,
    );
    expect(
      await resolveWorkspace(unreadable, 'roads', false, { idOrName: 'roads', workspace: undefined }),
    ).toBe(undefined);
  });

  it('applies the visibility rule to a known workspace (deleting: only where the operation answers with it)', async () => {
    const deleting: Workspace = { ...workspace, status: 'deleting', deletion_id: 'd1' };
    const known = { idOrName: WS_ID, workspace: deleting };
    expect(await resolveWorkspace(unreadable, WS_ID, false, known)).toBeUndefined();
    expect(await resolveWorkspace(unreadable, WS_ID, true, known)).toBe(deleting);
  });

  it('reads when the known lookup was of another parameter', async () => {
    const repo = {
      findById: async () => undefined,
      findByName: async (name: string) => (name === 'roads' ? workspace : undefined),
    } as unknown as WorkspaceRepository;
    expect(await resolveWorkspace(repo, 'roads', false, { idOrName: 'other', workspace: undefined })).toBe(
      workspace,
    );
  });

  it('uses a known service only in its own workspace and for its own parameter', async () => {
    const reads: string[] = [];
    const repo = {
      findById: async () => {
        reads.push('id');
        return undefined;
      },
      findByName: async () => {
        reads.push('name');
        return service;
      },
    } as unknown as Parameters<typeof requireService>[0];
    const known = { workspaceId: WS_ID, idOrName: 'pg', service };
    await requireService(repo, WS_ID, 'pg', false, known);
    expect(reads).toEqual([]);
    await requireService(repo, 'another-workspace', 'pg', false, known);
    expect(reads).toEqual(['name']);
    await expect(
      requireService(repo, WS_ID, 'pg', false, { ...known, service: undefined }),
    ).rejects.toMatchObject({ reason: 'service_not_found' });
  });
});
