import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeletionOperationBody, DeletionPlanBody } from '#api/deletion-schemas.ts';
import { keys } from '#store/keys.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';
import { hostDynamo, useHostStore } from '../support/store.ts';

let postgis: { host: string; port: number; database: string; user: string; password?: string };
let db: DynamoDBDocumentClient;
let table = '';

beforeAll(() => {
  table = inject('host').tableName;
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
  db = hostDynamo();
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

async function draftLayer(
  wsId: string,
  serviceId: string,
  publicId: string,
  extra: Record<string, unknown> = {},
) {
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
      // The deletion's record and the audit trail (its refusal tallies too, ADR 0109) outlive what
      // they describe (ADR 0094); they expire with the table's TTL.
      const kept = ['DeletionOperation', 'AuditRecord', 'AuditRefusalTally'].includes(String(item.entity));
      if (!kept && ids.some((id) => text.includes(id))) found.push(item);
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
      layers.push(
        await draftLayer(ws.id, svc.id, `l${i}`, styled && i % 2 === 0 ? { default_style: 'red' } : {}),
      );
    }
    const keep = await draftLayer(ws.id, other.id, 'keep');
    const inner = await group(ws.id, 'inner', ['l1', 'keep']);
    const outer = await group(ws.id, 'outer', ['inner', 'l2']);
    const survivor = await group(ws.id, 'survivor', ['keep']);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.name}?recurse=TRUE`, su());
    expect(res.status, res.text).toBe(202);
    expect(DeletionOperationBody.safeParse(res.body).success, res.text).toBe(true);
    expect(res.headers.location).toBe(`/api/v1/deletions/${res.body.id}`);
    expect(res.body).toMatchObject({
      scope: 'service',
      target_id: svc.id,
      target_name: 'pg',
      attempt_count: 1,
    });
    expect(res.body.progress.total).toBe(30 + 2 + 1);
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su()), 404);
    const listed = await call('GET', `/workspaces/${ws.id}/services`, su());
    expect(listed.body.services.map((s: { id: string }) => s.id)).toEqual([other.id]);

    // A second recursive delete answers with the same operation while it runs. Once the operation
    // has removed the service (30 layers can go before this call on a fast run), there is no
    // service left to delete: 404. Either way the operation completes below.
    const again = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=1`, su());
    expect([202, 404], again.text).toContain(again.status);
    if (again.status === 202) expect(again.body.id).toBe(res.body.id);

    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done).toMatchObject({ phase: 'done', progress: { total: 33, deleted: 33 } });
    expect(done.completed_at).toBeTruthy();

    const ids = [svc.id, inner.id, outer.id, ...layers.map((l) => l.id)];
    expect(await itemsMentioning(ids)).toEqual([]);
    // Neighbours survive with consistent counts; the style's references are released.
    const keepMarker = await db.send(
      new GetCommand({ TableName: table, Key: { PK: `WS#${ws.id}`, SK: 'PUBID#keep' } }),
    );
    expect(keepMarker.Item?.member_of_count).toBe(1);
    expect((await call('GET', `/workspaces/${ws.id}/layer-groups/${survivor.id}`, su())).status).toBe(200);
    expect(keep.id).toBeTruthy();
    if (styled) {
      const style = await db.send(
        new GetCommand({ TableName: table, Key: { PK: `WS#${ws.id}`, SK: 'STYLE#red' } }),
      );
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
      const res = await call(
        'GET',
        `/deletions?workspace=${ws.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        su(),
      );
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

// ---- seeding and helpers for the extended suite -------------------------------------------------

/**
 * Writes `count` copies of an API-created layer (and its public id marker) straight to the table,
 * only the attributes naming the layer changed, with the product's own key builders (as
 * bench/scaling.ts seeds). Returns the copies' ids and public ids.
 */
async function seedLayers(
  wsId: string,
  serviceId: string,
  templateId: string,
  count: number,
  prefix: string,
) {
  const layer = (
    await db.send(
      new GetCommand({
        TableName: table,
        Key: keys.layer(wsId, serviceId, templateId),
        ConsistentRead: true,
      }),
    )
  ).Item as Record<string, unknown>;
  const marker = (
    await db.send(
      new GetCommand({
        TableName: table,
        Key: keys.publicId(wsId, layer.public_id as string),
        ConsistentRead: true,
      }),
    )
  ).Item as Record<string, unknown>;
  expect(layer && marker).toBeTruthy();
  const ids: string[] = [];
  const publicIds: string[] = [];
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const publicId = `${prefix}${i}`;
    ids.push(id);
    publicIds.push(publicId);
    items.push(
      {
        ...layer,
        ...keys.layer(wsId, serviceId, id),
        id,
        public_id: publicId,
        ...(layer.title === layer.public_id ? { title: publicId } : {}),
      },
      { ...marker, ...keys.publicId(wsId, publicId), target_id: id, member_of_count: 0 },
    );
  }
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 24) batches.push(items.slice(i, i + 24));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let pending = batches[next++] as Record<string, unknown>[];
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 10) throw new Error('seeding: items stayed unprocessed');
        if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
        const out = await db.send(
          new BatchWriteCommand({
            RequestItems: { [table]: pending.map((Item) => ({ PutRequest: { Item } })) },
          }),
        );
        pending = (out.UnprocessedItems?.[table] ?? []).flatMap((r) =>
          r.PutRequest?.Item ? [r.PutRequest.Item] : [],
        );
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  // Copies bypass the plan counters (ADR 0101): the service becomes one from before them (no
  // counter base), so its next plan recounts.
  await db.send(new DeleteCommand({ TableName: table, Key: keys.planCountBase(wsId, serviceId) }));
  return { ids, publicIds };
}

/** A service whose recursive deletion fails at once: its layers stay, the service stays hidden. */
async function failedServiceDeletion() {
  const ws = await createWorkspace();
  const svc = await service(ws.id);
  const other = await service(ws.id, 'other');
  for (let i = 0; i < 5; i++) await draftLayer(ws.id, svc.id, `f${i}`);
  await draftLayer(ws.id, other.id, 'keep');
  // Injected fault: a layer item the workflow can't interpret (no public_id); every layer of the
  // service is in the same chunk, which is refused before anything of it is deleted.
  const broken = { PK: `WS#${ws.id}`, SK: `LAYER#${svc.id}#zz-broken`, entity: 'Layer', id: 'zz-broken' };
  await db.send(new PutCommand({ TableName: table, Item: broken }));
  const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
  expect(res.status, res.text).toBe(202);
  const failed = await poll(res.body.id, (op) => op.status === 'failed');
  const repair = () =>
    db.send(new PutCommand({ TableName: table, Item: { ...broken, public_id: 'zz-broken' } }));
  return { ws, svc, other, op: failed as { id: string; attempt_count: number; status: string }, repair };
}

const anonymous = async (method: string, path: string) => call(method, path, {});

describe('deletion routes: authentication and authorization', () => {
  it('answer 401 without a credential', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const id = crypto.randomUUID();
    const requests: [string, string][] = [
      ['DELETE', `/workspaces/${ws.id}/services/${svc.id}`],
      ['DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`],
      ['GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`],
      ['GET', `/deletions/${id}`],
      ['GET', '/deletions'],
      ['POST', `/deletions/${id}/retry`],
      ['DELETE', `/workspaces/${ws.id}?recurse=true`],
    ];
    for (const [method, path] of requests) expectError(await anonymous(method, path), 401, 'unauthenticated');
    // Nothing happened.
    expect((await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su())).status).toBe(200);
    expect((await call('GET', `/workspaces/${ws.id}`, su())).status).toBe(200);
  });

  it('deleteService needs admin (viewer and editor: 403); the plan is readable by a viewer', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    await draftLayer(ws.id, svc.id, 'v');
    const viewer = await createKey(ws.id, 'viewer');
    const editor = await createKey(ws.id, 'editor');
    const admin = await createKey(ws.id, 'admin');
    for (const k of [viewer, editor]) {
      expectError(
        await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, { headers: withKey(k.key) }),
        403,
      );
      expectError(
        await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, {
          headers: withKey(k.key),
        }),
        403,
      );
    }
    const editorJwt = bearer(await token({ workspaces: { [ws.id]: 'editor' } }));
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, { headers: editorJwt }),
      403,
    );
    expect((await call('GET', `/workspaces/${ws.id}/services/${svc.id}`, su())).status).toBe(200);

    const plan = await call('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`, {
      headers: withKey(viewer.key),
    });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.body.layers.count).toBe(1);

    // An admin of another workspace is refused (or doesn't see it), never allowed.
    const otherWs = await createWorkspace();
    const stranger = await createKey(otherWs.id, 'admin');
    const refused = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, {
      headers: withKey(stranger.key),
    });
    expect([403, 404]).toContain(refused.status);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, {
      headers: withKey(admin.key),
    });
    expect(res.status, res.text).toBe(202);
    await poll(res.body.id, (op) => op.status === 'completed');
  });

  it('deleteWorkspace with recurse=true is super_admin only (403 for a workspace admin)', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    await draftLayer(ws.id, svc.id, 'x');
    const admin = await createKey(ws.id, 'admin');
    expectError(
      await call('DELETE', `/workspaces/${ws.id}?recurse=true`, { headers: withKey(admin.key) }),
      403,
    );
    const adminJwt = bearer(await token({ workspaces: { [ws.id]: 'admin' } }));
    expectError(await call('DELETE', `/workspaces/${ws.id}?recurse=true`, { headers: adminJwt }), 403);
    expect((await call('GET', `/workspaces/${ws.id}`, su())).status).toBe(200);
    expect((await call('GET', `/deletions?workspace=${ws.id}`, su())).body.deletions).toEqual([]);
  });

  it('getServiceDeletionPlan 404s an unknown service or workspace', async () => {
    const ws = await createWorkspace();
    expectError(await call('GET', `/workspaces/${ws.id}/services/nope/deletion-plan`, su()), 404);
    expectError(
      await call('GET', `/workspaces/${ws.id}/services/${crypto.randomUUID()}/deletion-plan`, su()),
      404,
    );
    expectError(
      await call('GET', `/workspaces/${uniqueName('nows')}/services/nope/deletion-plan`, su()),
      404,
    );
  });
});

describe('retryDeletionOperation', () => {
  it('404s an unknown id', async () => {
    expectError(
      await call('POST', `/deletions/${crypto.randomUUID()}/retry`, su()),
      404,
      'deletion_not_found',
    );
  });

  it("404s an operation of a workspace the caller doesn't administer, and changes nothing", async () => {
    const { ws, op, repair } = await failedServiceDeletion();
    const viewer = await createKey(ws.id, 'viewer');
    const editor = await createKey(ws.id, 'editor');
    const otherWs = await createWorkspace();
    const stranger = await createKey(otherWs.id, 'admin');
    for (const k of [viewer, editor, stranger]) {
      expectError(
        await call('POST', `/deletions/${op.id}/retry`, { headers: withKey(k.key) }),
        404,
        'deletion_not_found',
      );
    }
    const after = await call('GET', `/deletions/${op.id}`, su());
    expect(after.body).toMatchObject({ status: 'failed', attempt_count: 1 });

    // The workspace's admin may retry it.
    await repair();
    const admin = await createKey(ws.id, 'admin');
    const retried = await call('POST', `/deletions/${op.id}/retry`, { headers: withKey(admin.key) });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.headers.location).toBe(`/api/v1/deletions/${op.id}`);
    expect(retried.body.attempt_count).toBe(2);
    await poll(op.id, (o) => o.status === 'completed');
  });

  it("404s a workspace's own deletion for a workspace admin (super_admin only)", async () => {
    const ws = await createWorkspace();
    // A token naming the workspace admin (an API key would go with the workspace).
    const admin = bearer(await token({ workspaces: { [ws.id]: 'admin' } }));
    const res = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    await poll(res.body.id, (o) => o.status === 'completed');
    expectError(
      await call('POST', `/deletions/${res.body.id}/retry`, { headers: admin }),
      404,
      'deletion_not_found',
    );
    expectError(
      await call('GET', `/deletions/${res.body.id}`, { headers: admin }),
      404,
      'deletion_not_found',
    );
  });
});

describe('retryDeletionOperation of an active operation', () => {
  /**
   * An operation that looks active (as if its execution were lost) with the given last progress;
   * built from a failed one: repaired, then put back to `running` with its workspace counter, as a
   * running service deletion has it.
   */
  async function activeLooking(updatedAt: string) {
    const failed = await failedServiceDeletion();
    await failed.repair();
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.deletion(failed.op.id),
        UpdateExpression: 'SET #s = :running, updated_at = :at REMOVE last_error',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':running': 'running', ':at': updatedAt },
      }),
    );
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.activeDeletions(failed.ws.id),
        UpdateExpression: 'ADD #c :one',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
    return failed;
  }

  async function activeCount(wsId: string) {
    const out = await db.send(new GetCommand({ TableName: table, Key: keys.activeDeletions(wsId) }));
    return out.Item?.count;
  }

  it('re-starts a running one under its current attempt (no new attempt) and it completes', async () => {
    const { ws, svc, op } = await activeLooking(new Date().toISOString());
    const res = await call('POST', `/deletions/${op.id}/retry`, su());
    expect(res.status, res.text).toBe(202);
    expect(res.body.attempt_count).toBe(1);
    const done = await poll(op.id, (o) => o.status === 'completed');
    expect(done.attempt_count).toBe(1);
    expect(await itemsMentioning([svc.id])).toEqual([]);
    expect(await activeCount(ws.id)).toBe(0);
  });

  it('starts a new attempt for a stalled one (no progress for 10 minutes) without counting it twice', async () => {
    const { ws, svc, op } = await activeLooking(new Date(Date.now() - 3_600_000).toISOString());
    const res = await call('POST', `/deletions/${op.id}/retry`, su());
    expect(res.status, res.text).toBe(202);
    expect(res.body.attempt_count).toBe(2);
    expect(res.body.status).toBe('pending');
    const done = await poll(op.id, (o) => o.status === 'completed');
    expect(done.attempt_count).toBe(2);
    expect(await itemsMentioning([svc.id])).toEqual([]);
    // The workspace no longer waits for it: its own recursive deletion may start.
    expect(await activeCount(ws.id)).toBe(0);
    const wsDelete = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    expect(wsDelete.status, wsDelete.text).toBe(202);
  });
});

describe('a service being deleted', () => {
  it('keeps its layers out of groups while its deletion is failed (400 unknown_member)', async () => {
    const { ws, other, op, repair } = await failedServiceDeletion();
    // The layers are still stored (the failing chunk deleted nothing) but their service is hidden.
    const marker = await db.send(
      new GetCommand({ TableName: table, Key: keys.publicId(ws.id, 'f1'), ConsistentRead: true }),
    );
    expect(marker.Item?.kind).toBe('layer');
    const create = await call('POST', `/workspaces/${ws.id}/layer-groups`, {
      headers: asSuperAdmin(),
      body: { public_id: 'g', members: [{ resource: 'keep' }, { resource: 'f1' }] },
    });
    expectError(create, 400, 'unknown_member');
    expect(create.body.detail).toMatch(/'f1'.*being deleted/);
    expectError(await call('GET', `/workspaces/${ws.id}/layer-groups/g`, su()), 404);
    // A group of the other service's layer is fine, but it can't take in f2 afterwards.
    const g = await group(ws.id, 'g', ['keep']);
    const update = await call('PUT', `/workspaces/${ws.id}/layer-groups/${g.id}`, {
      headers: asSuperAdmin(),
      body: { public_id: 'g', members: [{ resource: 'keep' }, { resource: 'f2' }] },
    });
    expectError(update, 400, 'unknown_member');
    const f2 = await db.send(
      new GetCommand({ TableName: table, Key: keys.publicId(ws.id, 'f2'), ConsistentRead: true }),
    );
    expect(f2.Item?.member_of_count ?? 0).toBe(0);

    await repair();
    expect((await call('POST', `/deletions/${op.id}/retry`, su())).status).toBe(202);
    await poll(op.id, (o) => o.status === 'completed');
    expect((await call('GET', `/workspaces/${ws.id}/layer-groups/${g.id}`, su())).body.members).toEqual([
      expect.objectContaining({ resource: 'keep' }),
    ]);
    expect(other.id).toBeTruthy();
  });

  it('blocks deleteWorkspace recurse (409 service_deletion_running) and group membership while it runs', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const first = await draftLayer(ws.id, svc.id, 'seed');
    const seeded = await seedLayers(ws.id, svc.id, first.id, 1000, 'r');
    // The copy deleted last (layers go in key order).
    const lastIndex = seeded.ids.indexOf([...seeded.ids].sort().at(-1) as string);
    const last = seeded.publicIds[lastIndex] as string;

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    expect(res.body.progress.total).toBe(1002);

    const blocked = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    const state = (await call('GET', `/deletions/${res.body.id}`, su())).body;
    expect(['pending', 'running'], 'the service deletion ended too soon for this test').toContain(
      state.status,
    );
    expectError(blocked, 409, 'service_deletion_running');
    expect((await call('GET', `/workspaces/${ws.id}`, su())).status).toBe(200);
    expectError(
      await call('POST', `/workspaces/${ws.id}/layer-groups`, {
        headers: asSuperAdmin(),
        body: { public_id: 'late', members: [{ resource: last }] },
      }),
      400,
      'unknown_member',
    );

    const done = await poll(res.body.id, (op) => op.status === 'completed', 170_000);
    expect(done.progress).toEqual({ total: 1002, deleted: 1002 });
    const left = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
        ExpressionAttributeValues: { ':p': `WS#${ws.id}`, ':s': 'PUBID#' },
      }),
    );
    expect(left.Items).toEqual([]);

    // Released: the workspace's own recursive deletion starts now.
    const wsDel = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    expect(wsDel.status, wsDel.text).toBe(202);
    await poll(wsDel.body.id, (op) => op.status === 'completed');
    expectError(await call('GET', `/workspaces/${ws.id}`, su()), 404);
  }, 240_000);

  it('a failed service deletion does not block the workspace; its retry then answers 409', async () => {
    const { ws, op, repair } = await failedServiceDeletion();
    await repair();
    const wsDel = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, su());
    expect(wsDel.status, wsDel.text).toBe(202);
    const retried = await call('POST', `/deletions/${op.id}/retry`, su());
    if (retried.status !== 404) expectError(retried, 409, 'workspace_being_deleted');
    await poll(wsDel.body.id, (o) => o.status === 'completed');
    expect(await itemsMentioning([ws.id])).toEqual([]);
  });
});

describe('deletion plans and closures', () => {
  it('counts every layer exactly and lists the first 100 (truncated) beyond 100 layers', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const first = await draftLayer(ws.id, svc.id, 'big');
    await seedLayers(ws.id, svc.id, first.id, 150, 'b');
    const plan = await call('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`, su());
    expect(plan.status, plan.text).toBe(200);
    expect(DeletionPlanBody.safeParse(plan.body).success).toBe(true);
    expect(plan.body.layers).toMatchObject({ count: 151, truncated: true });
    expect(plan.body.layers.items).toHaveLength(100);
    expect(new Set(plan.body.layers.items.map((l: { id: string }) => l.id)).size).toBe(100);
    expect(plan.body.layer_groups).toEqual({ count: 0, items: [], truncated: false });
    expect(plan.body.total).toBe(152);

    const conflict = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su());
    expectError(conflict, 409, 'service_has_dependencies');
    expect(conflict.body.plan).toEqual(plan.body);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status).toBe(202);
    expect(res.body.plan.layers.count).toBe(151);
    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done.progress).toEqual({ total: 152, deleted: 152 });
    expect(await itemsMentioning([svc.id])).toEqual([]);
  });

  it('includes groups of groups three levels deep (and a mixed parent) and removes them all', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    const other = await service(ws.id, 'other');
    await draftLayer(ws.id, svc.id, 'a');
    await draftLayer(ws.id, other.id, 'keep');
    const g1 = await group(ws.id, 'g1', ['a']);
    const g2 = await group(ws.id, 'g2', ['g1']);
    const g3 = await group(ws.id, 'g3', ['g2']);
    const mixed = await group(ws.id, 'mixed', ['g3', 'keep']);
    const unrelated = await group(ws.id, 'unrelated', ['keep']);
    const closure = [g1.id, g2.id, g3.id, mixed.id].sort();

    const plan = await call('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`, su());
    expect(plan.body.layer_groups.items.map((g: { id: string }) => g.id).sort()).toEqual(closure);
    expect(plan.body.layer_groups.count).toBe(4);
    expect(plan.body.total).toBe(1 + 4 + 1);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    await poll(res.body.id, (op) => op.status === 'completed');
    for (const g of [g1, g2, g3, mixed]) {
      expectError(await call('GET', `/workspaces/${ws.id}/layer-groups/${g.id}`, su()), 404);
    }
    expect(await itemsMentioning([svc.id, ...closure])).toEqual([]);
    for (const p of ['g1', 'g2', 'g3', 'mixed']) {
      const m = await db.send(new GetCommand({ TableName: table, Key: keys.publicId(ws.id, p) }));
      expect(m.Item, p).toBeUndefined();
    }
    expect((await call('GET', `/workspaces/${ws.id}/layer-groups/${unrelated.id}`, su())).status).toBe(200);
    const keepMarker = await db.send(new GetCommand({ TableName: table, Key: keys.publicId(ws.id, 'keep') }));
    expect(keepMarker.Item?.member_of_count).toBe(1);
  });

  it('concurrent recursive deletes of one service (or workspace) share one operation', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    await draftLayer(ws.id, svc.id, 'c');
    const same = await Promise.all(
      Array.from({ length: 4 }, () =>
        call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su()),
      ),
    );
    for (const r of same) expect(r.status, r.text).toBe(202);
    expect(new Set(same.map((r) => r.body.id)).size).toBe(1);
    await poll(same[0]?.body.id, (op) => op.status === 'completed');
    const listed = await call('GET', `/deletions?workspace=${ws.id}`, su());
    expect(listed.body.deletions).toHaveLength(1);

    const wsSame = await Promise.all(
      Array.from({ length: 3 }, () => call('DELETE', `/workspaces/${ws.id}?recurse=true`, su())),
    );
    for (const r of wsSame) expect(r.status, r.text).toBe(202);
    expect(new Set(wsSame.map((r) => r.body.id)).size).toBe(1);
    await poll(wsSame[0]?.body.id, (op) => op.status === 'completed');
  });

  it('answers 404 to a repeated delete once the deletion completed', async () => {
    const ws = await createWorkspace();
    const svc = await service(ws.id);
    await draftLayer(ws.id, svc.id, 'once');
    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status).toBe(202);
    await poll(res.body.id, (op) => op.status === 'completed');
    expectError(await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su()), 404);
    expectError(await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su()), 404);
    expectError(await call('DELETE', `/workspaces/${ws.id}/services/pg?recurse=true`, su()), 404);
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`, su()), 404);
    // The operation is still readable, completed.
    expect((await call('GET', `/deletions/${res.body.id}`, su())).body.status).toBe('completed');
  });
});

describe('raster_mosaic service deletion', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('answers 409 with mosaic_granules > 0, and recurse removes MOSAIC# and GRANULE# items', async () => {
    const ws = await createWorkspace();
    const root = mosaicRoot('mosaic-del-');
    roots.push(root);
    for (let i = 0; i < 3; i++) writeTiff(root, `g${i}.tif`, i * 10, 10);
    const created = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'mosaic', type: 'raster_mosaic', connection: { root_uri: root } },
    });
    expect(created.status, created.text).toBe(201);
    const svc = created.body as { id: string };
    const harvested = await call('POST', `/workspaces/${ws.id}/services/${svc.id}/mosaic/harvest`, {
      headers: asSuperAdmin(),
      body: {},
    });
    expect(harvested.status, harvested.text).toBe(200);
    expect(harvested.body.added).toHaveLength(3);

    const conflict = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su());
    expectError(conflict, 409, 'service_has_dependencies');
    expect(conflict.body.plan.mosaic_granules).toBe(3);
    expect(conflict.body.plan.target).toMatchObject({ scope: 'service', id: svc.id, type: 'raster_mosaic' });
    expect(conflict.body.plan.total).toBe(3 + 1);

    const mosaicItems = async () =>
      (await itemsMentioning([svc.id])).filter((i) => /^(MOSAIC|GRANULE)#/.test(String(i.SK)));
    expect((await mosaicItems()).length).toBeGreaterThanOrEqual(3);

    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    const done = await poll(res.body.id, (op) => op.status === 'completed');
    expect(done.progress).toEqual({ total: 4, deleted: 4 });
    expect(await mosaicItems()).toEqual([]);
    expect(await itemsMentioning([svc.id])).toEqual([]);
    expectError(await call('GET', `/workspaces/${ws.id}/services/${svc.id}/mosaic`, su()), 404);
  });

  /** A mosaic of `tiffs` files with one finished harvest job, and a job whose execution was lost (its marker held). */
  async function harvestedMosaic(tiffs: number) {
    const ws = await createWorkspace();
    const root = mosaicRoot('mosaic-jobs-del-');
    roots.push(root);
    for (let i = 0; i < tiffs; i++) writeTiff(root, `g${i}.tif`, i * 10, 10);
    const created = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'mosaic', type: 'raster_mosaic', connection: { root_uri: root } },
    });
    expect(created.status, created.text).toBe(201);
    const svc = created.body as { id: string };
    const jobs = `/workspaces/${ws.id}/services/${svc.id}/mosaic/harvest-jobs`;
    const job = await call('POST', jobs, { headers: asSuperAdmin(), body: {} });
    expect(job.status, job.text).toBe(202);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const got = await call('GET', `${jobs}/${job.body.id}`, su());
      if (got.body.status === 'succeeded') break;
      expect(['queued', 'running'], got.text).toContain(got.body.status);
      if (Date.now() > deadline) throw new Error(`harvest job still ${got.body.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // A job left running by a lost execution, with the mosaic's marker (ADR 0136).
    const lost = randomUUID();
    const at = new Date().toISOString();
    await db.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...keys.mosaicHarvestJob(ws.id, svc.id, lost),
          entity: 'MosaicHarvestJob',
          ...{ id: lost, workspace_id: ws.id, service_id: svc.id, status: 'running', phase: 'adding' },
          ...{ pattern: '**/*.tif', remove_missing: false, cancel_requested: false, failures: [] },
          ...{ files_scanned: 0, granules_added: 0, granules_removed: 0, files_skipped: 0, files_failed: 0 },
          ...{ version: 2, created_at: at, updated_at: at },
        },
      }),
    );
    await db.send(
      new PutCommand({
        TableName: table,
        Item: { ...keys.mosaicHarvestLock(ws.id, svc.id), entity: 'MosaicHarvestLock', job_id: lost },
      }),
    );
    const harvestItems = async () =>
      (await itemsMentioning([svc.id])).filter((i) => /^HARVEST(JOB|LOCK)#/.test(String(i.SK)));
    expect(await harvestItems()).toHaveLength(3);
    return { ws, svc, lost, harvestItems };
  }

  it('a recursive deletion removes the harvest jobs and the harvest marker', async () => {
    const { ws, svc, harvestItems } = await harvestedMosaic(2);
    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`, su());
    expect(res.status, res.text).toBe(202);
    const done = await poll(res.body.id, (op) => op.status === 'completed');
    // Side items: not in the plan's count (as in a workspace's deletion).
    expect(done.progress).toEqual({ total: 3, deleted: 3 });
    expect(await harvestItems()).toEqual([]);
    expect(await itemsMentioning([svc.id])).toEqual([]);
  });

  it('deleting an empty mosaic removes its harvest jobs and marker, and a late harvest write brings none back', async () => {
    const { ws, svc, lost, harvestItems } = await harvestedMosaic(0);
    const res = await call('DELETE', `/workspaces/${ws.id}/services/${svc.id}`, su());
    expect(res.status, res.text).toBe(204);
    expect(await harvestItems()).toEqual([]);
    // The lost execution's writes, had it come back: each is conditioned on the job's status.
    useHostStore();
    const { DynamoHarvestJobRepository } = await import('#store/mosaic-harvest-jobs-repository.ts');
    const jobs = new DynamoHarvestJobRepository();
    const job = {
      id: lost,
      workspace_id: ws.id,
      service_id: svc.id,
      status: 'running',
      phase: 'adding',
      version: 2,
    } as never;
    const now = new Date().toISOString();
    expect(await jobs.finish(job, 'failed', now)).toBe(false);
    expect(await jobs.markRunning(job, now)).toBe(false);
    expect(await jobs.requestCancel(job, now)).toBe(false);
    expect(await itemsMentioning([svc.id])).toEqual([]);
  });
});

describeCommonStatuses('deletions', [
  { operationId: 'deleteService', method: 'DELETE', path: '/workspaces/{ws}/services/nope?recurse=true' },
  {
    operationId: 'getServiceDeletionPlan',
    method: 'GET',
    path: '/workspaces/{ws}/services/nope/deletion-plan',
  },
  { operationId: 'getDeletionOperation', method: 'GET', path: `/deletions/${randomUUID()}` },
  { operationId: 'listDeletionOperations', method: 'GET', path: '/deletions' },
  { operationId: 'retryDeletionOperation', method: 'POST', path: `/deletions/${randomUUID()}/retry` },
  // A workspace that doesn't exist: the allowed request of the 429 probe must not delete anything.
  {
    operationId: 'deleteWorkspace',
    method: 'DELETE',
    path: `/workspaces/${uniqueName('absent')}?recurse=true`,
  },
]);
