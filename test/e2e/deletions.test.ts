import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DeletionOperationBody, DeletionPlanBody } from '../../shared/api/deletion-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

let postgis: { host: string; port: number; database: string; user: string; password?: string };
let db: DynamoDBDocumentClient;
let table = '';

beforeAll(() => {
  table = inject('host').tableName;
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
  db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: inject('host').dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
});

const su = () => ({ headers: asSuperAdmin() });

async function service(wsId: string, name = 'pg') {
  const res = await call('POST', `/workspaces/${wsId}/services`, {
    headers: asSuperAdmin(),
    body: { name, type: 'postgis', enabled: false, connection: postgis },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function draftLayer(wsId: string, serviceId: string, publicId: string, extra: Record<string, unknown> = {}) {
  const res = await call('POST', `/workspaces/${wsId}/services/${serviceId}/layers`, {
    headers: asSuperAdmin(),
    body: { source_layer: publicId, public_id: publicId, enabled: false, ...extra },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; public_id: string };
}

async function group(wsId: string, publicId: string, members: string[]) {
  const res = await call('POST', `/workspaces/${wsId}/layer-groups`, {
    headers: asSuperAdmin(),
    body: { public_id: publicId, members: members.map((resource) => ({ resource })) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; public_id: string };
}

/** Every item of the table that mentions one of these ids (in a key or an attribute). */
async function itemsMentioning(ids: string[]): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    for (const item of out.Items ?? []) {
      const text = JSON.stringify(item);
      if (item.entity !== 'DeletionOperation' && ids.some((id) => text.includes(id))) found.push(item);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return found;
}

async function poll(id: string, until: (op: { status: string }) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call('GET', `/deletions/${id}`, su());
    expect(res.status, res.text).toBe(200);
    if (until(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`operation ${id} stuck: ${res.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('deleteService', () => {
  it('deletes an empty service synchronously: 204, no body, gone from reads', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su());
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su()), 404);
    // The name is free again and nothing of it is left.
    expect(await itemsMentioning([svc.id])).toEqual([]);
    await service(ws.id);
  });

  it('answers 409 with the plan (layers and the nested group closure) and changes nothing', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const other = await service(ws.id, 'other');
    const a = await draftLayer(ws.id, svc.id, 'a');
    const b = await draftLayer(ws.id, svc.id, 'b');
    const keep = await draftLayer(ws.id, other.id, 'keep');
    const inner = await group(ws.id, 'inner', ['a', 'keep']);
    const outer = await group(ws.id, 'outer', ['inner']);
    const unrelated = await group(ws.id, 'unrelated', ['keep']);
    const before = await itemsMentioning([ws.id]);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su());
    expectError(res, 409, 'service_has_dependencies');
    expect(res.body.recurse_required).toBe(true);
    expect(DeletionPlanBody.safeParse(res.body.plan).success, JSON.stringify(res.body.plan)).toBe(true);
    expect(res.body.plan.layers.count).toBe(2);
    expect(res.body.plan.layers.items.map((l: { id: string }) => l.id).sort()).toEqual([a.id, b.id].sort());
    expect(res.body.plan.layer_groups.items.map((g: { id: string }) => g.id).sort()).toEqual(
      [inner.id, outer.id].sort(),
    );
    expect(res.body.plan.layer_groups.items.map((g: { id: string }) => g.id)).not.toContain(unrelated.id);
    expect(res.body.plan.total).toBe(2 + 2 + 1);
    expect(await itemsMentioning([ws.id])).toEqual(before);

    const plan = await call('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`, su());
    expect(plan.status).toBe(200);
    expect(plan.body).toEqual(res.body.plan);
    expect(keep.id).toBeTruthy();
  });

  it.each(['yes', 'TRUEISH', '2', ''])('refuses recurse=%j with 400', async (value) => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    expectError(await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=${value}`, su()), 400);
    expect((await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su())).status).toBe(200);
  });

  it('404s an unknown service', async () => {
    const ws = await createWorkspace();
    expectError(await call('DELETE', `/workspaces/${ws.id}/services/nope?recurse=true`, su()), 404);
  });

  it('with recurse=true: 202 + Location, hidden at once, completes, and leaves no item behind', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const other = await service(ws.id, 'other');
    const styleRes = await call('POST', `/workspaces/${ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: { name: 'red', format: 'mapbox', body: { version: 8, sources: {}, layers: [] } },
    });
    const styled = styleRes.status === 201;
    const layers = [];
    for (let i = 0; i < 30; i++) {
      layers.push(await draftLayer(ws.id, svc.id, `l${i}`, styled && i % 2 === 0 ? { default_style: 'red' } : {}));
    }
    const keep = await draftLayer(ws.id, other.id, 'keep');
    const inner = await group(ws.id, 'inner', ['l1', 'keep']);
    const outer = await group(ws.id, 'outer', ['inner', 'l2']);
    const survivor = await group(ws.id, 'survivor', ['keep']);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.name}?recurse=TRUE`, su());
    expect(res.status, res.text).toBe(202);
    expect(DeletionOperationBody.safeParse(res.body).success, res.text).toBe(true);
    expect(res.headers.location).toBe(`/api/v1/deletions/${res.body.id}`);
    expect(res.body).toMatchObject({ scope: 'service', target_id: svc.id, target_name: 'pg', attempt_count: 1 });
    expect(res.body.progress.total).toBe(30 + 2 + 1);
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su()), 404);
    const listed = await call('GET', `/workspaces/${ws.id}/services`, su());
    expect(listed.body.services.map((s: { id: string }) => s.id)).toEqual([other.id]);

    // A second recursive delete answers with the same operation.
    const again = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=1`, su());
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(res.body.id);

    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done).toMatchObject({ phase: 'done', progress: { total: 33, deleted: 33 } });
    expect(done.completed_at).toBeTruthy();

    const ids = [svc.id, inner.id, outer.id, ...layers.map((l) => l.id)];
    expect(await itemsMentioning(ids)).toEqual([]);
    // Neighbours survive with consistent counts; the style's references are released.
    const keepMarker = await db.send(new GetCommand({ TableName: table, Key: { PK: `WS#${ws.id}`, SK: 'PUBID#keep' } }));
    expect(keepMarker.Item?.member_of_count).toBe(1);
    expect((await call('GET', `/workspaces/${ws.id}/layer-groups/${survivor.id}`, su())).status).toBe(200);
    expect(keep.id).toBeTruthy();
    if (styled) {
      const style = await db.send(new GetCommand({ TableName: table, Key: { PK: `WS#${ws.id}`, SK: 'STYLE#red' } }));
      expect(style.Item?.layer_ref_count).toBe(0);
    }
    // The name is free again; the completed operation is returned unchanged by retry.
    await service(ws.id);
    const retried = await call('POST', `/deletions/${res.body.id}/retry`, su());
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual(done);
  });

  it('a failed deletion keeps the service hidden; retry resumes and completes (attempt_count 2)', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    for (let i = 0; i < 5; i++) await draftLayer(ws.id, svc.id, `f${i}`);
    // Injected fault: a layer item the workflow can't interpret (no public_id).
    const broken = { PK: `WS#${ws.id}`, SK: `LAYER#${svc.id}#zz-broken`, entity: 'Layer', id: 'zz-broken' };
    await db.send(new PutCommand({ TableName: table, Item: broken }));

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    const failed = await poll(res.body.id, (op) => op.status === 'failed');
    expect(failed.last_error).toMatch(/public_id/);
    expect(failed.attempt_count).toBe(1);
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su()), 404);

    // Repair, then retry.
    await db.send(new PutCommand({ TableName: table, Item: { ...broken, public_id: 'zz-broken' } }));
    const retried = await call('POST', `/deletions/${res.body.id}/retry`, su());
    expect(retried.status, retried.text).toBe(202);
    expect(retried.body.attempt_count).toBe(2);
    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done.attempt_count).toBe(2);
    expect(done.last_error).toBeUndefined();
    expect(await itemsMentioning([svc.id])).toEqual([]);
  });
});

describe('deletions', () => {
  it('lists operations newest first, filtered by workspace and status, only for admins of the workspace', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    await draftLayer(ws.id, svc.id, 'x');
    const op = (await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su())).body;
    await poll(op.id, (o) => o.status === 'completed');

    const list = await call('GET', `/deletions?workspace=${ws.name}`, su());
    expect(list.status).toBe(200);
    expect(list.body.deletions.map((d: { id: string }) => d.id)).toEqual([op.id]);
    const byStatus = await call('GET', `/deletions?workspace=${ws.id}&status=running`, su());
    expect(byStatus.body.deletions).toEqual([]);

    const admin = await createKey(ws.id, 'admin');
    const viewer = await createKey(ws.id, 'viewer');
    const otherWs = await createWorkspace();
    const stranger = await createKey(otherWs.id, 'admin');
    expect((await call('GET', `/deletions/${op.id}`, { headers: withKey(admin.key) })).status).toBe(200);
    const adminList = await call('GET', `/deletions?workspace=${ws.id}`, { headers: withKey(admin.key) });
    expect(adminList.body.deletions.map((d: { id: string }) => d.id)).toEqual([op.id]);
    expectError(await call('GET', `/deletions/${op.id}`, { headers: withKey(viewer.key) }), 404);
    expectError(await call('GET', `/deletions/${op.id}`, { headers: withKey(stranger.key) }), 404);
    const strangerList = await call('GET', '/deletions', { headers: withKey(stranger.key) });
    expect(strangerList.body.deletions.map((d: { id: string }) => d.id)).not.toContain(op.id);
    expectError(await call('GET', '/deletions?status=bogus', su()), 400);
    expectError(await call('GET', `/deletions/${crypto.randomUUID()}`, su()), 404);
  });

  it('pages with a cursor', async () => {
    const ws = await createWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const svc = await service(ws.id, `s${i}`);
      await draftLayer(ws.id, svc.id, `p${i}`);
      ids.push((await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su())).body.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await call('GET', `/deletions?workspace=${ws.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, su());
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.deletions.map((d: { id: string }) => d.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expectError(await call('GET', '/deletions?cursor=not-a-cursor', su()), 400);
  });
});

describe('deleteWorkspace recurse=true', () => {
  it('removes everything in the workspace, API keys and claim mappings included', async () => {
    const ws = await createWorkspace(uniqueName('wsdel'));
    const svc = await service(ws.id);
    for (let i = 0; i < 10; i++) await draftLayer(ws.id, svc.id, `w${i}`);
    await group(ws.id, 'g', ['w1']);
    const key = await createKey(ws.id, 'editor');
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'groups', claim_value: 'gis', role_id: 'viewer' },
    });
    expect(mapping.status, mapping.text).toBe(201);

    const plain = await call('DELETE', `/workspaces/${ws.id}`, su());
    expectError(plain, 409);
    const res = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    expect(res.body.scope).toBe('workspace');
    expectError(await call('GET', `/workspaces/${ws.id}`, su()), 404);
    // Again: the same operation while it runs; once it completed the workspace is simply gone.
    const again = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    if (again.status === 202) expect(again.body.id).toBe(res.body.id);
    else {
      expectError(again, 404);
      expect((await call('GET', `/deletions/${res.body.id}`, su())).body.status).toBe('completed');
    }

    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done.progress.deleted).toBe(done.progress.total);
    expect(await itemsMentioning([ws.id, ws.name, key.id])).toEqual([]);
    // The key can't authenticate any more; the name is free.
    expect((await call('GET', `/workspaces/${ws.id}`, { headers: withKey(key.key) })).status).toBe(401);
    await createWorkspace(ws.name);
    // Only super_admin may see a workspace's own deletion.
    const listed = await call('GET', `/deletions?workspace=${ws.id}`, su());
    expect(listed.body.deletions.map((d: { id: string }) => d.id)).toContain(res.body.id);
    const rest = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': `WS#${ws.id}` },
      }),
    );
    expect(rest.Items).toEqual([]);
  });
});
