import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { adminQuery } from '../support/imports.ts';
import { hostDynamo } from '../support/store.ts';

/**
 * getCatalogIntegrity and repairCatalogIntegrity (issue #26, ADR 0138). Each kind of damage is
 * planted directly in DynamoDB Local or the embedded PostGIS — never through the API, which
 * refuses to make it — then the check must find it, the dry run must change nothing, the repair
 * must fix it (audited, with its event), and a second check must be clean. Confirmed repairs are
 * narrowed to this test's workspace (or to one check): other test files share the catalog and
 * plant damage of their own.
 */

const postgis = () =>
  JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
const table = () => inject('host').tableName as string;
const db = () => hostDynamo();
const pk = (ws: string) => `WS#${ws}`;

type Finding = {
  id: string;
  kind: string;
  check: string;
  workspace_id?: string;
  entity: { type: string; id: string; parent_id?: string };
  repairable: boolean;
};

async function check(query: string) {
  const res = await call('GET', `/catalog/integrity${query}`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body as {
    complete: boolean;
    findings: Finding[];
    unchecked: { check: string; reason: string }[];
  };
}

async function repair(query: string) {
  const res = await call('POST', `/catalog/integrity/repair${query}`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return {
    ...(res.body as {
      dry_run: boolean;
      report: { findings: Finding[] };
      repairs: { finding_id: string; check: string; outcome: string }[];
    }),
    requestId: res.headers['x-amzn-requestid'] as string,
  };
}

async function item(key: { PK: string; SK: string }) {
  return (await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item;
}

async function items(workspaceId: string, prefix: string) {
  const out = await db().send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :p)',
      ExpressionAttributeValues: { ':pk': pk(workspaceId), ':p': prefix },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

async function createLayer(ws: string, service: string, body: Record<string, unknown>) {
  const res = await call('POST', `/workspaces/${ws}/services/${service}/layers`, {
    headers: asSuperAdmin(),
    body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; public_id: string; version: number };
}

/** Every event of the local host's feed (every page). */
async function feed(): Promise<{ 'detail-type': string; detail: { request_id: string; status?: string } }[]> {
  const events = [];
  let cursor = '0';
  for (;;) {
    const res = await call('GET', `/events?limit=1000&cursor=${cursor}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    events.push(...res.body.events);
    if (res.body.next_cursor === cursor) return events;
    cursor = res.body.next_cursor;
  }
}

/** Every check's code the planted damage of the workspace must produce, with the entity it names. */
const byCheck = (findings: Finding[], code: string) => findings.filter((f) => f.check === code);

describe('catalog integrity: check and repair', () => {
  let ws: { id: string; name: string };
  let service: { id: string; name: string };
  let kept: { id: string; public_id: string; version: number };
  let gone: { id: string; public_id: string };
  const sourceTable = `integrity_${randomBytes(4).toString('hex')}`;
  const ghostLayerId = randomUUID();
  const orphanService = randomUUID();

  beforeAll(async () => {
    ws = await createWorkspace(uniqueName('integrity'));
    const svc = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'db', type: 'postgis', enabled: true, connection: postgis() },
    });
    expect(svc.status, svc.text).toBe(201);
    service = svc.body;
    const style = await call('POST', `/workspaces/${ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: { name: 'lines', format: 'mapbox', body: { version: 8, sources: {}, layers: [] } },
    });
    expect(style.status, style.text).toBe(201);
    kept = await createLayer(ws.id, service.id, {
      source_layer: 'public.roads',
      public_id: 'roads',
      default_style: 'lines',
    });
    // A table of its own, published, then dropped behind the catalog's back.
    await adminQuery(
      `CREATE TABLE public.${sourceTable} (id serial PRIMARY KEY, geom geometry(Point, 4326))`,
    );
    await adminQuery(`GRANT SELECT ON public.${sourceTable} TO PUBLIC`);
    gone = await createLayer(ws.id, service.id, {
      source_layer: `public.${sourceTable}`,
      public_id: sourceTable,
    });
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'groups', claim_value: 'integrity', role_id: 'viewer' },
    });
    expect(mapping.status, mapping.text).toBe(201);
    const clean = await check(`?workspace=${ws.id}`);
    expect(clean.findings).toEqual([]);

    // The damage.
    const ghost = () => randomUUID();
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: {
          PK: pk(ws.id),
          SK: 'PUBID#ghost',
          entity: 'PublicIdMarker',
          kind: 'layer',
          target_id: ghost(),
        },
      }),
    );
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: pk(ws.id), SK: 'SVCNAME#ghost-db', entity: 'ServiceNameMarker', service_id: ghost() },
      }),
    );
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: pk(ws.id), SK: 'CLAIMTRIPLE#ghost', entity: 'ClaimMappingTriple', mapping_id: ghost() },
      }),
    );
    await db().send(
      new DeleteCommand({ TableName: table(), Key: { PK: `WSNAME#${ws.name}`, SK: 'WSNAME' } }),
    );
    const layer = await item({ PK: pk(ws.id), SK: `LAYER#${service.id}#${kept.id}` });
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: {
          ...layer,
          SK: `LAYER#${orphanService}#${ghostLayerId}`,
          id: ghostLayerId,
          service_id: orphanService,
          public_id: 'orphan',
        },
      }),
    );
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: pk(ws.id), SK: `LAYER#${service.id}#${kept.id}` },
        UpdateExpression: 'SET styles = :s',
        ExpressionAttributeValues: { ':s': ['ghost-style'] },
      }),
    );
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: pk(ws.id), SK: 'STYLE#lines' },
        UpdateExpression: 'SET layer_ref_count = :n',
        ExpressionAttributeValues: { ':n': 7 },
      }),
    );
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: pk(ws.id), SK: 'WORKSPACE' },
        UpdateExpression: 'SET claim_mapping_count = :n',
        ExpressionAttributeValues: { ':n': 9 },
      }),
    );
    const shard = (await items(ws.id, 'SUMCOUNT#')).find((i) => typeof i.shard === 'number');
    expect(shard).toBeDefined();
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: shard?.PK, SK: shard?.SK },
        UpdateExpression: 'ADD services :n',
        ExpressionAttributeValues: { ':n': 5 },
      }),
    );
    const planShard = (await items(ws.id, `PLANCOUNT#${service.id}#L#`))[0];
    expect(planShard).toBeDefined();
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: planShard?.PK, SK: planShard?.SK },
        UpdateExpression: 'ADD n :n',
        ExpressionAttributeValues: { ':n': 3 },
      }),
    );
    await adminQuery(`DROP TABLE public.${sourceTable}`);
  }, 400_000);

  it('finds each kind of planted damage, names it, and says which it repairs', async () => {
    const report = await check(`?workspace=${ws.id}`);
    expect(report.complete).toBe(true);
    const f = report.findings;
    expect(f.every((x) => x.workspace_id === ws.id)).toBe(true);
    expect(byCheck(f, 'public_id_marker').map((x) => x.entity.id)).toEqual(['ghost']);
    expect(byCheck(f, 'service_name_marker').map((x) => x.entity.id)).toEqual(['ghost-db']);
    expect(byCheck(f, 'claim_mapping_marker')).toHaveLength(1);
    expect(byCheck(f, 'workspace_name_marker').map((x) => x.entity.id)).toEqual([ws.id]);
    expect(byCheck(f, 'layer_service').map((x) => x.entity.id)).toEqual([ghostLayerId]);
    expect(byCheck(f, 'layer_style').map((x) => x.entity.id)).toEqual([kept.id]);
    expect(byCheck(f, 'style_layer_refs').map((x) => x.entity.id)).toEqual(['lines']);
    expect(byCheck(f, 'claim_mapping_count').map((x) => x.entity.id)).toEqual([ws.id]);
    expect(byCheck(f, 'summary_counters').map((x) => x.entity.id)).toEqual([ws.id]);
    expect(byCheck(f, 'service_layer_count').map((x) => x.entity.id)).toEqual([service.id]);
    expect(byCheck(f, 'layer_source').map((x) => x.entity.id)).toEqual([gone.id]);
    const kinds = new Set(f.map((x) => x.kind));
    for (const k of ['dangling_reference', 'orphaned_marker', 'counter_mismatch', 'missing_source_table']) {
      expect(kinds, k).toContain(k);
    }
    expect(f.every((x) => x.repairable)).toBe(true);
    // Stable ids: the same damage, the same id.
    expect((await check(`?workspace=${ws.id}`)).findings.map((x) => x.id)).toEqual(f.map((x) => x.id));
  });

  it('a dry run says what it would repair and changes nothing', async () => {
    const dry = await repair(`?workspace=${ws.id}`);
    expect(dry.dry_run).toBe(true);
    expect(dry.repairs.length).toBe(dry.report.findings.length);
    expect(new Set(dry.repairs.map((r) => r.outcome))).toEqual(new Set(['would_repair']));
    expect(await item({ PK: pk(ws.id), SK: 'PUBID#ghost' })).toBeDefined();
    expect((await check(`?workspace=${ws.id}`)).findings.length).toBe(dry.report.findings.length);
  });

  it('repairs every finding, audited and as events; a second check is clean', async () => {
    const fixed = await repair(`?workspace=${ws.id}&confirm=true`);
    expect(fixed.dry_run).toBe(false);
    const outcomes = new Map(fixed.repairs.map((r) => [r.check, r.outcome]));
    for (const [code, outcome] of outcomes) expect(outcome, code).toBe('repaired');
    expect(await check(`?workspace=${ws.id}`)).toMatchObject({ findings: [] });

    // What each repair did.
    expect(await item({ PK: pk(ws.id), SK: 'PUBID#ghost' })).toBeUndefined();
    expect(await item({ PK: pk(ws.id), SK: 'SVCNAME#ghost-db' })).toBeUndefined();
    expect((await item({ PK: `WSNAME#${ws.name}`, SK: 'WSNAME' }))?.workspace_id).toBe(ws.id);
    expect(await item({ PK: pk(ws.id), SK: `LAYER#${orphanService}#${ghostLayerId}` })).toBeUndefined();
    const repairedLayer = await call('GET', `/workspaces/${ws.id}/services/${service.id}/layers/${kept.id}`, {
      headers: asSuperAdmin(),
    });
    expect(repairedLayer.body.styles ?? []).toEqual([]);
    expect(repairedLayer.body.default_style).toBe('lines');
    const disabled = await call('GET', `/workspaces/${ws.id}/services/${service.id}/layers/${gone.id}`, {
      headers: asSuperAdmin(),
    });
    expect(disabled.body.enabled).toBe(false);
    const summary = await call('GET', `/workspaces/${ws.id}/summary`, { headers: asSuperAdmin() });
    expect(summary.body.services).toBe(1);
    expect(summary.body.claim_mappings).toBe(1);
    expect(summary.body.layers).toEqual({ total: 2, enabled: 1, disabled: 1 });
    const plan = await call('GET', `/workspaces/${ws.id}/services/${service.id}/deletion-plan`, {
      headers: asSuperAdmin(),
    });
    expect(plan.body.layers.count).toBe(2);
    expect((await item({ PK: pk(ws.id), SK: 'STYLE#lines' }))?.layer_ref_count).toBe(1);
    expect((await item({ PK: pk(ws.id), SK: 'WORKSPACE' }))?.claim_mapping_count).toBe(1);

    // Audited: one record per repair, naming the check; and each became an event.
    const audit = await call('GET', `/workspaces/${ws.id}/audit?operation=repairCatalogIntegrity&limit=100`, {
      headers: asSuperAdmin(),
    });
    expect(audit.status, audit.text).toBe(200);
    const repairs = (audit.body.records as { changes: { type: string; status?: string }[] }[]).flatMap((r) =>
      r.changes.filter((c) => c.type === 'integrity_repair'),
    );
    expect(repairs.map((c) => c.status).sort()).toEqual(fixed.repairs.map((r) => r.check).sort());
    const deadline = Date.now() + 20_000;
    let events: { 'detail-type': string; detail: { request_id: string; status?: string } }[] = [];
    while (Date.now() < deadline) {
      events = (await feed()).filter(
        (e) => e.detail.request_id === fixed.requestId && e['detail-type'] === 'Integrity Repair Created',
      );
      if (events.length >= fixed.repairs.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(events.map((e) => e.detail.status).sort()).toEqual(fixed.repairs.map((r) => r.check).sort());
  }, 120_000);

  it('reports what it must not repair, and repairs it never', async () => {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: pk(ws.id), SK: `LAYER#${service.id}#${kept.id}` },
        UpdateExpression: 'SET allowed_roles = :r',
        ExpressionAttributeValues: { ':r': ['ghost-role'] },
      }),
    );
    const found = byCheck((await check(`?workspace=${ws.id}`)).findings, 'layer_role');
    expect(found.map((x) => [x.entity.id, x.repairable])).toEqual([[kept.id, false]]);
    const attempt = await repair(`?workspace=${ws.id}&check=layer_role&confirm=true`);
    expect(attempt.repairs.map((r) => r.outcome)).toEqual(['not_repairable']);
    expect((await item({ PK: pk(ws.id), SK: `LAYER#${service.id}#${kept.id}` }))?.allowed_roles).toEqual([
      'ghost-role',
    ]);
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: pk(ws.id), SK: `LAYER#${service.id}#${kept.id}` },
        UpdateExpression: 'SET allowed_roles = :r',
        ExpressionAttributeValues: { ':r': [] },
      }),
    );
    expect((await check(`?workspace=${ws.id}`)).findings).toEqual([]);
  });

  it('over the whole catalog: a role’s reference count and an import schema without its job', async () => {
    const roleId = `r-${randomBytes(4).toString('hex')}`;
    expect((await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: roleId } })).status).toBe(
      201,
    );
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'groups', claim_value: 'role-refs', role_id: roleId },
    });
    expect(mapping.status, mapping.text).toBe(201);
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: `ROLE#${roleId}`, SK: 'ROLE' },
        UpdateExpression: 'SET ref_count = :n',
        ExpressionAttributeValues: { ':n': 4 },
      }),
    );
    const hex = randomBytes(16).toString('hex');
    await adminQuery(`CREATE SCHEMA import_${hex}`);
    await adminQuery(`CREATE TABLE import_${hex}.parcels (fid int)`);
    // Owned by the loader, as every import schema is (it creates them).
    await adminQuery(`ALTER SCHEMA import_${hex} OWNER TO geoplane_importer`);
    await adminQuery(`ALTER TABLE import_${hex}.parcels OWNER TO geoplane_importer`);

    const roles = await check('?check=role_refs');
    expect(roles.complete).toBe(true);
    expect(byCheck(roles.findings, 'role_refs').map((x) => x.entity.id)).toContain(roleId);
    const schemas = await check('?check=import_schema');
    expect(schemas.findings.map((x) => x.entity.id)).toContain(`import_${hex}`);
    // A workspace's check can't see either: it says so rather than reporting them clean.
    const narrow = await check(`?workspace=${ws.id}`);
    expect(narrow.unchecked.map((u) => u.check).sort()).toEqual(['import_schema', 'role_refs']);

    expect(
      (await repair('?check=role_refs&confirm=true')).repairs.find((r) => r.check === 'role_refs')?.outcome,
    ).toBe('repaired');
    expect((await item({ PK: `ROLE#${roleId}`, SK: 'ROLE' }))?.ref_count).toBe(1);
    const dropped = await repair('?check=import_schema&confirm=true');
    const mine = schemas.findings.find((x) => x.entity.id === `import_${hex}`);
    expect(dropped.repairs.find((r) => r.finding_id === mine?.id)?.outcome).toBe('repaired');
    expect(await adminQuery('SELECT 1 FROM pg_namespace WHERE nspname = $1', [`import_${hex}`])).toEqual([]);
    expect(
      byCheck((await check('?check=role_refs')).findings, 'role_refs').map((x) => x.entity.id),
    ).not.toContain(roleId);
  }, 120_000);

  it('is for super_admin only, and refuses bad input with a 4xx', async () => {
    const admin = await createKey(ws.id, 'admin');
    expectError(await call('GET', '/catalog/integrity', { headers: withKey(admin.key) }), 403);
    expectError(
      await call('POST', '/catalog/integrity/repair?confirm=true', { headers: withKey(admin.key) }),
      403,
    );
    expectError(await call('GET', '/catalog/integrity?check=everything', { headers: asSuperAdmin() }), 400);
    expectError(
      await call('POST', '/catalog/integrity/repair?confirm=yes', { headers: asSuperAdmin() }),
      400,
    );
    expectError(
      await call('GET', `/catalog/integrity?workspace=${uniqueName()}`, { headers: asSuperAdmin() }),
      404,
    );
  });
});

describe('catalog integrity: the tile cache usage (ADR 0139)', () => {
  it('finds a usage record that disagrees with the tile store, and sets it to what the store holds', async () => {
    const ws = await createWorkspace();
    // No tile stored, yet the record counts some: a lost subtraction, a hand edit, a partial restore.
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: {
          PK: pk(ws.id),
          SK: 'TILECACHE',
          entity: 'TileCache',
          workspace_id: ws.id,
          generation: 2,
          entries: 7,
          bytes: 700,
        },
      }),
    );
    const report = await check(`?workspace=${ws.id}&check=tile_cache_usage`);
    expect(report.unchecked.filter((u) => u.check === 'tile_cache_usage')).toEqual([]);
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'counter_mismatch',
        check: 'tile_cache_usage',
        workspace_id: ws.id,
        entity: { type: 'tile_cache', id: ws.id },
        repairable: true,
      }),
    ]);

    const fixed = await repair(`?workspace=${ws.id}&check=tile_cache_usage&confirm=true`);
    expect(fixed.repairs.map((r) => [r.check, r.outcome])).toEqual([['tile_cache_usage', 'repaired']]);
    // The usage is the store's; the clear generation stays.
    expect(await item({ PK: pk(ws.id), SK: 'TILECACHE' })).toMatchObject({
      entries: 0,
      bytes: 0,
      generation: 2,
    });
    expect((await check(`?workspace=${ws.id}`)).findings).toEqual([]);
    // What getPersistentTileCacheStats answers from that record.
    const stats = await call('GET', `/workspaces/${ws.id}/tile-cache/stats`, { headers: asSuperAdmin() });
    expect(stats.status, stats.text).toBe(200);
    expect(stats.body).toMatchObject({ entries: 0, bytes: 0 });
  });
});
