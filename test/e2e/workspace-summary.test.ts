import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

/**
 * getWorkspaceSummary (issue #26, ADR 0137): counts kept by the writes' own transactions. Each
 * answer is compared with the truth this test reads itself — every item of the workspace's
 * partition in DynamoDB Local, classified by its entity tag — never with numbers written here.
 */

const postgis = () =>
  JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
const table = () => inject('host').tableName as string;

type Summary = {
  services: number;
  layers: { total: number; enabled: number; disabled: number };
  styles: number;
  imports: { total: number; by_status: Record<string, number> };
  api_keys: { total: number; active: number; revoked: number };
  claim_mappings: number;
};

/** Every item of a workspace's partition (strongly consistent), read straight from the table. */
async function partition(workspaceId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await hostDynamo().send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `WS#${workspaceId}` },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((out.Items ?? []) as Record<string, unknown>[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The summary the partition's items make, counted by this test. */
async function truth(workspaceId: string): Promise<Summary> {
  const items = await partition(workspaceId);
  const of = (entity: string) => items.filter((i) => i.entity === entity);
  const layers = of('Layer');
  const keys = of('ApiKey');
  const imports = of('ImportJob');
  const byStatus: Record<string, number> = {};
  for (const i of imports) byStatus[i.status as string] = (byStatus[i.status as string] ?? 0) + 1;
  return {
    services: of('Service').length,
    layers: {
      total: layers.length,
      enabled: layers.filter((l) => l.enabled !== false).length,
      disabled: layers.filter((l) => l.enabled === false).length,
    },
    styles: of('Style').length,
    imports: { total: imports.length, by_status: byStatus },
    api_keys: {
      total: keys.length,
      active: keys.filter((k) => k.revoked !== true).length,
      revoked: keys.filter((k) => k.revoked === true).length,
    },
    claim_mappings: of('ClaimMapping').length,
  };
}

async function summary(workspace: string, headers = asSuperAdmin()): Promise<Summary> {
  const res = await call('GET', `/workspaces/${workspace}/summary`, { headers });
  expect(res.status, res.text).toBe(200);
  return res.body as Summary;
}

/** The summary equals the partition's truth (import statuses without their zeros). */
async function expectTruth(workspaceId: string) {
  const s = await summary(workspaceId);
  const t = await truth(workspaceId);
  const nonZero = Object.fromEntries(Object.entries(s.imports.by_status).filter(([, n]) => n > 0));
  expect({ ...s, imports: { ...s.imports, by_status: nonZero } }).toEqual({
    ...t,
    workspace_id: workspaceId,
  });
  return s;
}

async function createService(workspace: string, name = uniqueName('svc')) {
  const res = await call('POST', `/workspaces/${workspace}/services`, {
    headers: asSuperAdmin(),
    body: { name, type: 'postgis', enabled: true, connection: postgis() },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function createLayer(workspace: string, service: string, body: Record<string, unknown>) {
  const res = await call('POST', `/workspaces/${workspace}/services/${service}/layers`, {
    headers: asSuperAdmin(),
    body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; version: number };
}

async function createStyle(workspace: string, name = uniqueName('style')) {
  const res = await call('POST', `/workspaces/${workspace}/styles`, {
    headers: asSuperAdmin(),
    body: {
      name,
      format: 'mapbox',
      body: { version: 8, sources: {}, layers: [{ id: 'bg', type: 'background' }] },
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { name: string };
}

async function waitForDeletion(location: string) {
  for (let i = 0; i < 600; i++) {
    const res = await call('GET', location.replace(/^\/api\/v1/, ''), { headers: asSuperAdmin() });
    if (res.body?.status === 'completed') return;
    expect(res.body?.status, res.text).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('deletion did not finish');
}

describe('getWorkspaceSummary (GET /workspaces/{workspace}/summary)', () => {
  it('starts at zero and follows every counted write exactly: services, layers by state, styles, keys, mappings', async () => {
    const ws = await createWorkspace();
    const empty = await expectTruth(ws.id);
    expect(empty.services + empty.layers.total + empty.styles + empty.api_keys.total).toBe(0);

    const svc = await createService(ws.id);
    const published = await createLayer(ws.id, svc.id, { source_layer: 'public.roads', public_id: 'roads' });
    const draft = await createLayer(ws.id, svc.id, {
      source_layer: 'public.places',
      public_id: 'places',
      enabled: false,
    });
    await createStyle(ws.id);
    const gone = await createStyle(ws.id);
    await createKey(ws.id, 'viewer');
    const revoked = await createKey(ws.id, 'editor');
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'groups', claim_value: 'summary', role_id: 'viewer' },
    });
    expect(mapping.status, mapping.text).toBe(201);
    let s = await expectTruth(ws.id);
    expect(s.layers).toEqual({ total: 2, enabled: 1, disabled: 1 });

    // A draft enabled, a layer disabled: the states move, the total stays.
    const enable = await call('PUT', `/workspaces/${ws.id}/services/${svc.id}/layers/${draft.id}`, {
      headers: asSuperAdmin(),
      body: { enabled: true },
    });
    expect(enable.status, enable.text).toBe(200);
    const disable = await call('PUT', `/workspaces/${ws.id}/services/${svc.id}/layers/${published.id}`, {
      headers: asSuperAdmin(),
      body: { enabled: false },
    });
    expect(disable.status, disable.text).toBe(200);
    // A key revoked (twice: the second changes nothing), another deleted for good after its revoke.
    for (let i = 0; i < 2; i++) {
      const r = await call('DELETE', `/workspaces/${ws.id}/apikeys/${revoked.id}`, {
        headers: asSuperAdmin(),
      });
      expect(r.status, r.text).toBe(204);
    }
    const third = await createKey(ws.id, 'viewer');
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/apikeys/${third.id}`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
    const permanent = await call('DELETE', `/workspaces/${ws.id}/apikeys/${third.id}/permanent`, {
      headers: asSuperAdmin(),
    });
    expect(permanent.status, permanent.text).toBe(204);
    const styleGone = await call('DELETE', `/workspaces/${ws.id}/styles/${gone.name}`, {
      headers: asSuperAdmin(),
    });
    expect(styleGone.status, styleGone.text).toBe(204);
    const mappingGone = await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mapping.body.id}`, {
      headers: asSuperAdmin(),
    });
    expect(mappingGone.status, mappingGone.text).toBe(204);
    s = await expectTruth(ws.id);
    expect(s.api_keys).toEqual({ total: 2, active: 1, revoked: 1 });
    expect(s.claim_mappings).toBe(0);
    expect(s.styles).toBe(1);

    // A layer deleted on its own, then the service with the rest by the deletion workflow.
    const del = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}/layers/${published.id}`, {
      headers: asSuperAdmin(),
    });
    expect(del.status, del.text).toBe(204);
    await expectTruth(ws.id);
    const more = await createLayer(ws.id, svc.id, { source_layer: 'public.parcels', public_id: 'parcels' });
    expect(more.id).toBeTruthy();
    const recursive = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, {
      headers: asSuperAdmin(),
    });
    expect(recursive.status, recursive.text).toBe(202);
    await waitForDeletion(recursive.headers.location as string);
    s = await expectTruth(ws.id);
    expect(s.services).toBe(0);
    expect(s.layers.total).toBe(0);
  }, 120_000);

  it('stays exact under concurrent writes: 20 layers created at once, then 10 of them deleted at once', async () => {
    const ws = await createWorkspace();
    const svc = await createService(ws.id);
    // Drafts: the writes race on the counters, not on the data source.
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createLayer(ws.id, svc.id, { source_layer: 'public.roads', public_id: `roads-${i}`, enabled: false }),
      ),
    );
    expect((await expectTruth(ws.id)).layers).toEqual({ total: 20, enabled: 0, disabled: 20 });
    const deleted = await Promise.all(
      made.slice(0, 10).map((l) =>
        call('DELETE', `/workspaces/${ws.id}/services/${svc.id}/layers/${l.id}`, {
          headers: asSuperAdmin(),
        }),
      ),
    );
    expect(deleted.map((r) => r.status)).toEqual(Array(10).fill(204));
    expect((await expectTruth(ws.id)).layers).toEqual({ total: 10, enabled: 0, disabled: 10 });
  }, 120_000);

  it('counts a workspace older than its counters once, on its first summary, then follows writes again', async () => {
    const ws = await createWorkspace();
    const svc = await createService(ws.id);
    await createLayer(ws.id, svc.id, { source_layer: 'public.roads', public_id: 'roads' });
    await createStyle(ws.id);
    // Make it look older than the counters: remove them as if they were never written.
    const counters = (await partition(ws.id)).filter((i) => i.entity === 'SummaryCounter');
    expect(counters.length).toBeGreaterThan(0);
    for (const c of counters) {
      await hostDynamo().send(new DeleteCommand({ TableName: table(), Key: { PK: c.PK, SK: c.SK } }));
    }
    const s = await expectTruth(ws.id);
    expect(s.services).toBe(1);
    expect(s.layers.total).toBe(1);
    // The recount wrote the base: the counters are exact again and follow the next write.
    expect(
      (await partition(ws.id)).some((i) => i.entity === 'SummaryCounter' && i.SK === 'SUMCOUNT#BASE'),
    ).toBe(true);
    await createLayer(ws.id, svc.id, { source_layer: 'public.places', public_id: 'places', enabled: false });
    expect((await expectTruth(ws.id)).layers).toEqual({ total: 2, enabled: 1, disabled: 1 });
  }, 120_000);

  it('is for the workspace’s admins: viewers and editors 403, another workspace’s admin 403, unknown 404', async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expect((await summary(ws.name, withKey(admin.key))).services).toBe(0);
    for (const role of ['viewer', 'editor'] as const) {
      const key = await createKey(ws.id, role);
      expectError(await call('GET', `/workspaces/${ws.id}/summary`, { headers: withKey(key.key) }), 403);
    }
    const foreign = await createKey(other.id, 'admin');
    expectError(await call('GET', `/workspaces/${ws.id}/summary`, { headers: withKey(foreign.key) }), 403);
    expectError(await call('GET', `/workspaces/${uniqueName()}/summary`, { headers: asSuperAdmin() }), 404);
  }, 60_000);
});
