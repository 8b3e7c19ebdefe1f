import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAPIKey } from '#api/operations/api-keys.ts';
import { requestFingerprint } from '#http/idempotency.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo, useHostStore } from '../support/store.ts';

let db: DynamoDBDocumentClient;
let table = '';
let postgis: Record<string, unknown>;

beforeAll(() => {
  table = inject('host').tableName;
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
  db = hostDynamo();
});

afterAll(() => db.destroy());

const su = (key?: string) => ({
  ...asSuperAdmin(),
  ...(key === undefined ? {} : { 'Idempotency-Key': key }),
});

/** The idempotency records of one principal and operation, read directly from DynamoDB Local. */
async function records(principalId: string, operationId: string): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'entity = :e AND principal_id = :p AND operation_id = :o',
        ExpressionAttributeValues: { ':e': 'IdempotencyRecord', ':p': principalId, ':o': operationId },
        ExclusiveStartKey: start,
      }),
    );
    found.push(...((out.Items ?? []) as Record<string, unknown>[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return found;
}

async function disabledService(wsId: string) {
  const res = await call('POST', `/workspaces/${wsId}/services`, {
    headers: asSuperAdmin(),
    body: { name: 'pg', type: 'postgis', enabled: false, connection: postgis },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

describe('Idempotency-Key: a lost answer is replayed, not repeated', () => {
  it('createAPIKey: the retry gets the same key (secret included), and only one key exists', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const key = randomUUID();
    const send = () =>
      call('POST', `/workspaces/${ws.id}/apikeys`, {
        headers: { ...withKey(admin.key), 'Idempotency-Key': key },
        body: { name: 'ci', role_id: 'editor' },
      });
    const first = await send();
    const again = await send();
    expect(first.status, first.text).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.body.key).toMatch(/^gpk_/);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['x-content-type-options']).toBe('nosniff');
    // The replayed key works: it is the one key that was created.
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: withKey(again.body.key) })).status).toBe(
      200,
    );
    const list = await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: asSuperAdmin() });
    expect(list.body.api_keys.filter((k: { name: string }) => k.name === 'ci')).toHaveLength(1);

    // At rest the answer is sealed: neither the secret nor the body appears in the raw item.
    const [record, ...more] = await records(`apikey:${admin.id}`, 'createAPIKey');
    expect(more).toEqual([]);
    expect(record).toMatchObject({ status: 'completed', operation_id: 'createAPIKey' });
    const raw = JSON.stringify(record);
    expect(raw).not.toContain(first.body.key);
    expect(raw).not.toContain(first.body.key.slice(4));
    expect(raw).not.toContain(first.body.id);
    expect(raw).not.toContain(key);
    const expires = Number(record?.expires_at_epoch);
    expect(expires - Date.now() / 1000).toBeGreaterThan(24 * 3600 - 120);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(24 * 3600 + 1);
  });

  it('createLayer: the retry gets the same layer, and only one layer exists', async () => {
    const ws = await createWorkspace();
    const svc = await disabledService(ws.id);
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/services/${svc.id}/layers`;
    const body = { source_layer: 'towns', public_id: 'towns', enabled: false };
    const first = await call('POST', path, { headers: su(key), body });
    const again = await call('POST', path, { headers: su(key), body });
    expect(first.status, first.text).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const list = await call('GET', path, { headers: asSuperAdmin() });
    expect(list.body.layers.map((l: { id: string }) => l.id)).toEqual([first.body.id]);
  });

  it('createImport: the retry gets the same import, and only one import exists', async () => {
    const ws = await createWorkspace();
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/imports`;
    const body = { source: { kind: 'upload', filename: 'a.geojson' } };
    const first = await call('POST', path, { headers: su(key), body });
    const again = await call('POST', path, { headers: su(key), body });
    expect([200, 201, 202]).toContain(first.status);
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const list = await call('GET', path, { headers: asSuperAdmin() });
    expect(list.body.imports.map((i: { id: string }) => i.id)).toEqual([first.body.id]);
  });

  it('deleteService?recurse=true (idempotent by design, no key needed): the retry answers the same operation, one operation exists', async () => {
    const ws = await createWorkspace();
    const svc = await disabledService(ws.id);
    for (let i = 0; i < 30; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          call('POST', `/workspaces/${ws.id}/services/${svc.id}/layers`, {
            headers: asSuperAdmin(),
            body: { source_layer: `l${i + j}`, public_id: `l${i + j}`, enabled: false },
          }),
        ),
      );
    }
    const path = `/workspaces/${ws.id}/services/${svc.id}?recurse=true`;
    const first = await call('DELETE', path, { headers: asSuperAdmin() });
    const again = await call('DELETE', path, { headers: asSuperAdmin() });
    expect(first.status, first.text).toBe(202);
    // While it runs the retry gets the same operation; once it completed the service is gone.
    if (again.status === 202) expect(again.body.id).toBe(first.body.id);
    else expectError(again, 404);
    const listed = await call('GET', `/deletions?workspace=${ws.id}`, { headers: asSuperAdmin() });
    expect(listed.body.deletions.map((d: { id: string }) => d.id)).toEqual([first.body.id]);
  });
});

describe('Idempotency-Key: refusals', () => {
  it('answers 422 idempotency_key_reused for the same key with a different body, and runs nothing', async () => {
    const ws = await createWorkspace();
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/apikeys`;
    expect(
      (await call('POST', path, { headers: su(key), body: { name: 'a', role_id: 'viewer' } })).status,
    ).toBe(201);
    const other = await call('POST', path, { headers: su(key), body: { name: 'b', role_id: 'viewer' } });
    expectError(other, 422, 'idempotency_key_reused');
    const list = await call('GET', path, { headers: asSuperAdmin() });
    expect(list.body.api_keys.map((k: { name: string }) => k.name).sort()).toEqual(['a']);
  });

  it('keeps one record per principal: another caller with the same key gets its own answer', async () => {
    const ws = await createWorkspace();
    const one = await createKey(ws.id, 'admin');
    const two = await createKey(ws.id, 'admin');
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/apikeys`;
    const a = await call('POST', path, {
      headers: { ...withKey(one.key), 'Idempotency-Key': key },
      body: { name: 'from-one', role_id: 'viewer' },
    });
    const b = await call('POST', path, {
      headers: { ...withKey(two.key), 'Idempotency-Key': key },
      body: { name: 'from-two', role_id: 'viewer' },
    });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
    // ... and per operation: the same key on another POST is a new request.
    const role = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: { ...withKey(one.key), 'Idempotency-Key': key },
      body: { claim_name: 'groups', claim_value: `g-${key}`, role_id: 'viewer', priority: 1 },
    });
    expect(role.status, role.text).toBe(201);
  });

  it('answers 409 idempotency_key_in_flight while the first request holds the key, and runs once its claim expired', async () => {
    useHostStore();
    const { idempotencyStore } = await import('#wiring/repositories.ts');
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const key = randomUUID();
    const body = { name: 'slow', role_id: 'viewer' };
    // A first request that is still running: its claim, as makeHandler writes it.
    const fingerprint = requestFingerprint({
      method: 'POST',
      path: createAPIKey.path,
      params: { workspace: ws.id },
      query: {},
      body,
    });
    const now = Date.now();
    const claimed = await idempotencyStore().claim(
      { principalId: `apikey:${admin.id}`, operationId: 'createAPIKey', key },
      { claimId: randomUUID(), fingerprint, nowMs: now, inProgressUntilMs: now + 1500 },
    );
    expect(claimed).toBeUndefined();
    const send = () =>
      call('POST', `/workspaces/${ws.id}/apikeys`, {
        headers: { ...withKey(admin.key), 'Idempotency-Key': key },
        body,
      });
    expectError(await send(), 409, 'idempotency_key_in_flight');
    await new Promise((r) => setTimeout(r, 1600));
    // Its process died: past the deadline the retry runs.
    const retry = await send();
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('runs concurrent duplicates once: one answer is the operation, the others 409 or its replay', async () => {
    const ws = await createWorkspace();
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/apikeys`;
    const all = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('POST', path, { headers: su(key), body: { name: 'dup', role_id: 'viewer' } }),
      ),
    );
    const fresh = all.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const r of all) {
      if (r.status === 201) expect(r.body.id).toBe(fresh[0]?.body.id);
      else expectError(r, 409, 'idempotency_key_in_flight');
    }
    const list = await call('GET', path, { headers: asSuperAdmin() });
    expect(list.body.api_keys.filter((k: { name: string }) => k.name === 'dup')).toHaveLength(1);
  });

  it.each([
    ['over 255 characters', 'k'.repeat(256)],
    ['empty', ''],
  ])('answers 400 invalid_idempotency_key for a key %s', async (_case, key) => {
    const ws = await createWorkspace();
    const res = await call('POST', `/workspaces/${ws.id}/apikeys`, {
      headers: su(key),
      body: { name: 'x', role_id: 'viewer' },
    });
    expectError(res, 400, 'invalid_idempotency_key');
    const list = await call('GET', `/workspaces/${ws.id}/apikeys`, { headers: asSuperAdmin() });
    expect(list.body.api_keys.filter((k: { name: string }) => k.name === 'x')).toEqual([]);
  });

  it('does not store a failed first answer: the retry with the same key runs again', async () => {
    const ws = await createWorkspace();
    const key = randomUUID();
    const path = `/workspaces/${ws.id}/services/nope/layers`;
    const body = { source_layer: 't', public_id: 't', enabled: false };
    expectError(await call('POST', path, { headers: su(key), body }), 404);
    const again = await call('POST', path, { headers: su(key), body });
    expectError(again, 404);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('Idempotency-Key: answers that hand out a session are never replayed (ADR 0109)', () => {
  const sessionCookie = (res: { cookies: string[] }) =>
    res.cookies.find((c) => c.startsWith('__Host-session='))?.split(';')[0] ?? '';

  it('login: the same key and body log in again (a new session), nothing is kept', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const key = randomUUID();
    const send = () =>
      call('POST', '/auth/login', { headers: { 'Idempotency-Key': key }, body: { token: admin.key } });
    const first = await send();
    const again = await send();
    expect([first.status, again.status], again.text).toEqual([201, 201]);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(sessionCookie(again)).toMatch(/^__Host-session=.{43}$/);
    expect(sessionCookie(again)).not.toBe(sessionCookie(first));
    expect(again.body.session_id).not.toBe(first.body.session_id);
    expect(await records('anonymous', 'login')).toEqual([]);
  });

  it('refreshSession: a retry with the same key is not handed the new cookies again', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const login = await call('POST', '/auth/login', { body: { token: admin.key } });
    expect(login.status).toBe(201);
    const csrf =
      login.cookies
        .find((c) => c.startsWith('csrf_token='))
        ?.split(';')[0]
        ?.split('=')[1] ?? '';
    const headers = {
      Cookie: `${sessionCookie(login)}; csrf_token=${csrf}`,
      'X-CSRF-Token': csrf,
      'Idempotency-Key': randomUUID(),
    };
    const first = await call('POST', '/auth/refresh', { headers });
    expect(first.status, first.text).toBe(200);
    const again = await call('POST', '/auth/refresh', { headers });
    expectError(again, 409, 'session_already_refreshed');
    expect(again.cookies).toEqual([]);
    // The key was claimed while the refresh ran and freed after: no answer is kept.
    for (const record of await records(`apikey:${admin.id}`, 'refreshSession')) {
      expect(record.status).toBe('in_progress');
      expect(record.response).toBeUndefined();
      expect(record.expires_at_epoch).toBe(0);
    }
  });
});

describe('DynamoIdempotencyStore (the records behind the host)', () => {
  it('replays a completed record until its expiry, then lets the key be claimed again; only the owner completes', async () => {
    useHostStore();
    const { idempotencyStore } = await import('#wiring/repositories.ts');
    const store = idempotencyStore();
    const scope = { principalId: `jwt:${randomUUID()}`, operationId: 'createThing', key: 'k#1' };
    const now = Date.now();
    const claim = (claimId: string, nowMs: number) =>
      store.claim(scope, { claimId, fingerprint: 'f', nowMs, inProgressUntilMs: nowMs + 60_000 });
    expect(await claim('a', now)).toBeUndefined();
    expect(await claim('b', now)).toEqual({ status: 'in_progress', fingerprint: 'f' });
    expect(await store.complete(scope, 'b', 'sealed', Math.floor(now / 1000) + 10)).toBe(false);
    expect(await store.complete(scope, 'a', 'sealed', Math.floor(now / 1000) + 10)).toBe(true);
    expect(await claim('c', now + 5_000)).toEqual({
      status: 'completed',
      fingerprint: 'f',
      response: 'sealed',
    });
    // Released or not, a completed record stays (release only frees an in-progress claim).
    await store.release(scope, 'a');
    expect(await claim('c', now + 5_000)).toMatchObject({ status: 'completed' });
    // Past its expiry (TTL deletes lazily), the key is free.
    expect(await claim('d', now + 12_000)).toBeUndefined();
  });
});
