import { expect, inject } from 'vitest';
import { ErrorBody } from '#api/schemas.ts';
import { GLOBAL_ROLE_CLAIM, ROLES_CLAIM } from '#auth/authenticate.ts';
import { localIssuer } from '#infra/local/files.ts';
import { asSuperAdmin, call, uniqueName } from './client.ts';

/** Asserts a response is an error with the standard body of DESIGN §5 and the given status. */
export function expectError(
  res: { status: number; body: unknown; headers: Record<string, string> },
  status: number,
  reason?: string,
) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const parsed = ErrorBody.safeParse(res.body);
  expect(parsed.success, `error body shape: ${JSON.stringify(res.body)}`).toBe(true);
  const body = res.body as { code: number; reason: string; request_id: string };
  expect(body.code).toBe(status);
  expect(body.request_id.length).toBeGreaterThan(0);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  if (reason) expect(body.reason).toBe(reason);
}

/** Creates a workspace as super_admin and returns it. */
export async function createWorkspace(name = uniqueName(), description?: string) {
  const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name, description } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; description?: string; version: number };
}

/** Creates an API key with a role in a workspace; returns the secret and the record. */
export async function createKey(
  workspace: string,
  role: 'admin' | 'editor' | 'viewer',
  extra: Record<string, unknown> = {},
) {
  const res = await call('POST', `/workspaces/${workspace}/apikeys`, {
    headers: asSuperAdmin(),
    body: { name: `${role}-key`, role_id: role, ...extra },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; key: string; key_prefix: string; role_id: string };
}

/** Headers for an API key. */
export function withKey(key: string): Record<string, string> {
  return { 'X-API-Key': key };
}

/** A JWT from the local issuer of the test host. */
export async function token(
  roles: { superAdmin?: boolean; workspaces?: Record<string, string> },
  subject = 'test-user',
  ttlSeconds = 600,
) {
  const issuer = await localIssuer(inject('host').dataDir);
  const claims: Record<string, unknown> = {};
  if (roles.superAdmin) claims[GLOBAL_ROLE_CLAIM] = 'super_admin';
  if (roles.workspaces) claims[ROLES_CLAIM] = roles.workspaces;
  return issuer.sign(claims, subject, ttlSeconds);
}

/** Headers for a bearer token. */
export function bearer(jwt: string): Record<string, string> {
  return { Authorization: `Bearer ${jwt}` };
}
