import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuditList } from '#api/audit-schemas.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

const auditOf = (ws: string, query = '') => `/workspaces/${ws}/audit${query}`;

/** Every record of a workspace's trail, newest first, through the cursor. */
async function trail(ws: string, query = '', limit = 100) {
  const records: any[] = [];
  let cursor: string | undefined;
  do {
    const sep = query ? '&' : '?';
    const q = `${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await call('GET', auditOf(ws, q), { headers: asSuperAdmin() });
    expect(res.status).toBe(200);
    expect(AuditList.safeParse(res.body).success).toBe(true);
    records.push(...res.body.records);
    cursor = res.body.next_cursor;
  } while (cursor);
  return records;
}

describe('audit trail', () => {
  it('records each change with its principal, operation, request id and the new version, newest first', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const updated = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...withKey(admin.key), 'If-Match': '"1"' },
      body: { description: 'audited' },
    });
    expect(updated.status).toBe(200);
    const records = await trail(ws.id);
    const [latest] = records;
    expect(latest).toMatchObject({
      operation: 'updateWorkspace',
      outcome: 'succeeded',
      request_id: updated.headers['x-amzn-requestid'],
      principal: { id: `apikey:${admin.id}`, auth_method: 'apikey' },
      workspace_id: ws.id,
      changes: [{ type: 'workspace', id: ws.id, action: 'updated', version: 2 }],
    });
    const ops = records.map((r) => r.operation);
    expect(ops).toEqual(['updateWorkspace', 'createAPIKey', 'createWorkspace']);
    expect(records[1].changes).toEqual([
      expect.objectContaining({ type: 'api_key', id: admin.id, action: 'created', workspace_id: ws.id }),
    ]);
    expect(records[2].changes[0]).toMatchObject({ type: 'workspace', action: 'created', version: 1 });
    const times = records.map((r) => r.at);
    expect([...times].sort().reverse()).toEqual(times);
    // No secret of the key is in the trail.
    expect(JSON.stringify(records)).not.toContain(admin.key);
  });

  it('records a refused change with its status and reason, and nothing changed', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const refused = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...withKey(admin.key), 'If-Match': '"7"' },
      body: { description: 'stale' },
    });
    expectError(refused, 412);
    const [latest] = await trail(ws.id);
    expect(latest).toMatchObject({
      operation: 'updateWorkspace',
      outcome: 'refused',
      status: 412,
      request_id: refused.headers['x-amzn-requestid'],
      principal: { id: `apikey:${admin.id}` },
      changes: [],
    });
  });

  it('tallies a flood of refusals of one kind on one record per minute, with a count (ADR 0109)', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const stale = () =>
      call('PUT', `/workspaces/${ws.id}`, {
        headers: { ...withKey(admin.key), 'If-Match': '"7"' },
        body: { description: 'stale' },
      });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const refused = await stale();
      expectError(refused, 412);
      ids.push(refused.headers['x-amzn-requestid'] as string);
    }
    // Concurrent refusals of the kind count on the same record too.
    const burst = await Promise.all(Array.from({ length: 4 }, stale));
    for (const r of burst) expectError(r, 412);
    const other = await createWorkspace();
    const taken = await call('PUT', `/workspaces/${ws.id}`, {
      headers: withKey(admin.key),
      body: { name: other.name },
    });
    expectError(taken, 409);
    const refusals = await trail(ws.id, '?outcome=refused');
    const stales = refusals.filter((r) => r.status === 412);
    // One record per window: two when the flood crossed a minute.
    expect(stales.length).toBeGreaterThanOrEqual(1);
    expect(stales.length).toBeLessThanOrEqual(2);
    expect(stales.reduce((sum, r) => sum + r.count, 0)).toBe(16);
    const first = stales.at(-1);
    expect(first).toMatchObject({
      operation: 'updateWorkspace',
      outcome: 'refused',
      reason: 'version_mismatch',
      request_id: ids[0],
      principal: { id: `apikey:${admin.id}` },
      changes: [],
    });
    expect(Date.parse(first.last_at)).toBeGreaterThanOrEqual(Date.parse(first.at));
    expect([...ids, ...burst.map((r) => r.headers['x-amzn-requestid'])]).toContain(stales[0].last_request_id);
    // Another reason is another kind: its own record.
    expect(refusals.filter((r) => r.status === 409)).toMatchObject([
      { count: 1, request_id: taken.headers['x-amzn-requestid'] },
    ]);
  });

  it("keeps a refusal for want of any role out of the workspace's trail: the same record whether it exists or not", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const probe = (target: string) =>
      call('PUT', `/workspaces/${target}`, { headers: withKey(admin.key), body: { description: 'x' } });
    expectError(await probe(other.id), 403, 'no_workspace_access');
    expectError(await probe(randomUUID()), 403, 'no_workspace_access');
    expect(await trail(other.id, '?outcome=refused')).toEqual([]);
    const global = await call(
      'GET',
      `/audit?outcome=refused&principal=${encodeURIComponent(`apikey:${admin.id}`)}`,
      { headers: asSuperAdmin() },
    );
    expect(global.status).toBe(200);
    const records = global.body.records as any[];
    // One record (two when the probes crossed a minute), in no workspace's trail.
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records.length).toBeLessThanOrEqual(2);
    expect(records.reduce((sum, r) => sum + r.count, 0)).toBe(2);
    for (const r of records) {
      expect(r).toMatchObject({ operation: 'updateWorkspace', reason: 'no_workspace_access', status: 403 });
      expect(r.workspace_id).toBeUndefined();
    }
  });

  it('filters by operation, principal, outcome and time window, and pages with the cursor', async () => {
    const ws = await createWorkspace();
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push(await createKey(ws.id, 'viewer'));
    const all = await trail(ws.id, '', 2);
    expect(all.filter((r) => r.operation === 'createAPIKey')).toHaveLength(5);
    const onlyKeys = await trail(ws.id, '?operation=createAPIKey', 2);
    expect(onlyKeys.map((r) => r.changes[0].id).sort()).toEqual(keys.map((k) => k.id).sort());
    const first = all.at(-1);
    const second = all.at(-2);
    const window = await trail(
      ws.id,
      `?since=${encodeURIComponent(first.at)}&until=${encodeURIComponent(second.at)}`,
    );
    expect(window.map((r) => r.id)).toEqual([second.id, first.id].filter((id, i, a) => a.indexOf(id) === i));
    const byPrincipal = await trail(ws.id, `?principal=${encodeURIComponent(first.principal.id)}`);
    expect(byPrincipal.length).toBeGreaterThanOrEqual(1);
    expect(byPrincipal.every((r) => r.principal.id === first.principal.id)).toBe(true);
    expect(await trail(ws.id, '?outcome=refused')).toEqual([]);
    expectError(
      await call('GET', auditOf(ws.id, '?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z'), {
        headers: asSuperAdmin(),
      }),
      400,
      'invalid_time_window',
    );
    expectError(await call('GET', auditOf(ws.id, '?cursor=bogus'), { headers: asSuperAdmin() }), 400);
  });

  it('is visible to workspace admins only; the global trail to super_admin only', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const editor = await createKey(ws.id, 'editor');
    expect((await call('GET', auditOf(ws.id), { headers: withKey(admin.key) })).status).toBe(200);
    expectError(await call('GET', auditOf(ws.id), { headers: withKey(editor.key) }), 403);
    expectError(await call('GET', auditOf(other.id), { headers: withKey(admin.key) }), 403);
    expectError(await call('GET', '/audit', { headers: withKey(admin.key) }), 403);
    const global = await call('GET', '/audit?operation=createWorkspace&limit=50', {
      headers: asSuperAdmin(),
    });
    expect(global.status).toBe(200);
    expect(global.body.records.some((r: any) => r.workspace_id === other.id)).toBe(true);
  });
});
