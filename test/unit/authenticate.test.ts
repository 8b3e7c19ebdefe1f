import { describe, expect, it } from 'vitest';
import { authenticate } from '../../shared/auth/authenticate.ts';
import { type ApiKeyCredential, type ApiKeyRepository, hashApiKey, newApiKeySecret } from '../../shared/domain/api-keys.ts';
import { UnauthenticatedError } from '../../shared/http/errors.ts';

function repoWith(secret: string, credential: Partial<ApiKeyCredential>): ApiKeyRepository {
  const stored: ApiKeyCredential = {
    key_id: 'k1',
    role_id: 'admin',
    revoked: false,
    name: 'ci',
    workspace_id: 'w1',
    ...credential,
  };
  return {
    findCredentialByHash: async (hash: string) => (hash === hashApiKey(secret) ? stored : undefined),
  } as unknown as ApiKeyRepository;
}

describe('authenticate with X-API-Key', () => {
  const secret = newApiKeySecret();

  it('maps a workspace key to its role in that workspace and its usage key', async () => {
    const p = await authenticate({ 'X-API-Key': secret }, repoWith(secret, {}));
    expect(p).toMatchObject({ authMethod: 'apikey', superAdmin: false, roles: { w1: 'admin' }, usageKey: 'ws:w1' });
  });

  it('makes a global super_admin key a super admin', async () => {
    const p = await authenticate({ 'x-api-key': secret }, repoWith(secret, { role_id: 'super_admin', workspace_id: undefined }));
    expect(p.superAdmin).toBe(true);
  });

  it.each([
    ['a revoked key', { revoked: true }, undefined],
    ['an expired key', { expires_at: '2020-01-01T00:00:00Z' }, undefined],
    ['an unknown key', {}, newApiKeySecret()],
    ['a malformed key', {}, 'gpk_short'],
  ])('rejects %s', async (_case, credential, presented) => {
    await expect(authenticate({ 'X-API-Key': presented ?? secret }, repoWith(secret, credential))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it('rejects a request without credentials and a non-bearer Authorization', async () => {
    const repo = repoWith(secret, {});
    await expect(authenticate({}, repo)).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(authenticate({ Authorization: `Basic ${secret}` }, repo)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});
