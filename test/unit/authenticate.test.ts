import { describe, expect, it } from 'vitest';
import { type AuthPorts, authenticate } from '#auth/authenticate.ts';
import {
  type ApiKeyCredential,
  type ApiKeyRepository,
  hashApiKey,
  newApiKeySecret,
} from '#domain/api-keys.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import type { SessionRepository } from '#domain/sessions.ts';
import { UnauthenticatedError } from '#http/errors.ts';

function repoWith(secret: string, credential: Partial<ApiKeyCredential>): AuthPorts {
  const stored: ApiKeyCredential = {
    key_id: 'k1',
    role_id: 'admin',
    revoked: false,
    name: 'ci',
    workspace_id: 'w1',
    ...credential,
  };
  return {
    apiKeys: {
      findCredentialByHash: async (hash: string) => (hash === hashApiKey(secret) ? stored : undefined),
    } as unknown as ApiKeyRepository,
    claimMappings: { all: async () => [] } as unknown as ClaimMappingRepository,
    sessions: { findByTokenHash: async () => undefined } as unknown as SessionRepository,
  };
}

describe('authenticate with X-API-Key', () => {
  const secret = newApiKeySecret();

  it('maps a workspace key to its role in that workspace', async () => {
    const p = await authenticate({ 'X-API-Key': secret }, 'GET', repoWith(secret, {}));
    expect(p).toMatchObject({
      authMethod: 'apikey',
      superAdmin: false,
      roles: { w1: 'admin' },
    });
  });

  it('makes a global super_admin key a super admin', async () => {
    const p = await authenticate(
      { 'x-api-key': secret },
      'GET',
      repoWith(secret, { role_id: 'super_admin', workspace_id: undefined }),
    );
    expect(p.superAdmin).toBe(true);
  });

  it.each([
    ['a revoked key', { revoked: true }, undefined],
    ['an expired key', { expires_at: '2020-01-01T00:00:00Z' }, undefined],
    ['an unknown key', {}, newApiKeySecret()],
    ['a malformed key', {}, 'gpk_short'],
  ])('rejects %s', async (_case, credential, presented) => {
    await expect(
      authenticate({ 'X-API-Key': presented ?? secret }, 'GET', repoWith(secret, credential)),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('rejects a request without credentials and a non-bearer Authorization', async () => {
    const repo = repoWith(secret, {});
    await expect(authenticate({}, 'GET', repo)).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(authenticate({ Authorization: `Basic ${secret}` }, 'GET', repo)).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });
});
