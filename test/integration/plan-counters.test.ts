import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeletionPlan } from '#domain/deletions.ts';
import { AlreadyExistsError, InvalidInputError } from '#domain/errors.ts';
import type { Layer } from '#domain/layers.ts';
import type { Service } from '#domain/services.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { hostDynamo, serviceRecord, useHostStore } from '../support/store.ts';

// The deletion plan's counters (ADR 0101) against the run's DynamoDB Local: exact across every
// write that adds, changes or removes a layer, and for services older than the counters.

type Stores = {
  keys: typeof import('#store/keys.ts');
  counters: typeof import('#store/plan-counters.ts');
  audit: typeof import('#store/audit-records.ts');
  layers: import('#store/layers-repository.ts').DynamoLayerRepository;
  services: import('#store/services-repository.ts').DynamoServiceRepository;
  deletions: import('#store/deletions-repository.ts').DynamoDeletionRepository;
  styles: import('#store/styles-repository.ts').DynamoStyleRepository;
  roles: import('#store/roles-repository.ts').DynamoRoleRepository;
  workspaces: import('#store/workspaces-repository.ts').DynamoWorkspaceRepository;
  steps: typeof import('#store/deletion-steps.ts');
  plans: typeof import('#store/deletion-plans.ts');
  deletionDomain: typeof import('#domain/deletions.ts');
  workspaceDomain: typeof import('#domain/workspaces.ts');
  styleDomain: typeof import('#domain/styles.ts');
  roleDomain: typeof import('#domain/roles.ts');
};
let s: Stores;
const db = () => hostDynamo();
let table: string;

beforeAll(async () => {
  useHostStore();
  table = process.env.TABLE_NAME as string;
  s = {
    keys: await import('#store/keys.ts'),
    counters: await import('#store/plan-counters.ts'),
    audit: await import('#store/audit-records.ts'),
    layers: new (await import('#store/layers-repository.ts')).DynamoLayerRepository(),
    services: new (await import('#store/services-repository.ts')).DynamoServiceRepository(),
    deletions: new (await import('#store/deletions-repository.ts')).DynamoDeletionRepository(),
    styles: new (await import('#store/styles-repository.ts')).DynamoStyleRepository(),
    roles: new (await import('#store/roles-repository.ts')).DynamoRoleRepository(),
    workspaces: new (await import('#store/workspaces-repository.ts')).DynamoWorkspaceRepository(),
    steps: await import('#store/deletion-steps.ts'),
    plans: await import('#store/deletion-plans.ts'),
    deletionDomain: await import('#domain/deletions.ts'),
    workspaceDomain: await import('#domain/workspaces.ts'),
    styleDomain: await import('#domain/styles.ts'),
    roleDomain: await import('#domain/roles.ts'),
  };
});

const client = hostDynamo();
afterAll(() => client.destroy());

const name = (prefix = 'pc') => `${prefix}-${randomUUID().slice(0, 13)}`;

async function fixture(): Promise<{ ws: Workspace; service: Service }> {
  const ws = await s.workspaceDomain.createWorkspace(
    { workspaces: s.workspaces },
    { body: { name: name() } },
  );
  const service = serviceRecord(ws.id, name());
  await s.services.create(service);
  return { ws, service };
}

function layer(service: Service, over: Partial<Layer> = {}): Layer {
  const ts = new Date().toISOString();
  const id = randomUUID();
  return {
    id,
    workspace_id: service.workspace_id,
    service_id: service.id,
    source_layer: 'places',
    public_id: `l-${id.slice(0, 8)}`,
    title: 'a layer',
    crs_default: 4326,
    enabled: false,
    public: false,
    allowed_roles: [],
    dimensions: [],
    styles: [],
    is_sql_view: false,
    version: 1,
    created_at: ts,
    updated_at: ts,
    ...over,
  };
}

async function style(ws: Workspace): Promise<string> {
  const n = name('st');
  await s.styleDomain.createStyle(
    { styles: s.styles },
    {
      workspaceId: ws.id,
      body: { name: n, format: 'mapbox', body: { version: 8, sources: {}, layers: [] } },
    },
  );
  return n;
}

async function role(): Promise<string> {
  const id = name('role');
  await s.roleDomain.createRole({ roles: s.roles }, { body: { id } });
  return id;
}

const plan = (service: Service) => s.deletions.servicePlan(service);
/** The plan deleteService reads: it may record the counters' base of an older service. */
const deletionPlan = (service: Service) => s.deletions.servicePlan(service, { recordCounts: true });

/** The counters' sum, as a plan reads it (fails when they have no base). */
async function counted(service: Service) {
  const reading = await s.counters.readPlanCounters(db(), table, service.workspace_id, service.id);
  if (!reading.exact) throw new Error('the counters have no base');
  return {
    layers: reading.tallies.layers,
    styles: Object.fromEntries(reading.tallies.styles),
    roles: Object.fromEntries(reading.tallies.roles),
  };
}

/** What a walk over the service's layers counts (the truth the counters must equal). */
async function walked(service: Service) {
  const out = await client.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: {
        ':p': s.keys.keys.workspacePartition(service.workspace_id),
        ':s': s.keys.keys.layerPrefix(service.id),
      },
      ConsistentRead: true,
    }),
  );
  const t = s.counters.emptyTallies();
  for (const l of out.Items ?? []) s.counters.tallyLayer(t, l);
  return { layers: t.layers, styles: Object.fromEntries(t.styles), roles: Object.fromEntries(t.roles) };
}

async function counterItems(service: Service) {
  const out = await client.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: {
        ':p': s.keys.keys.workspacePartition(service.workspace_id),
        ':s': s.keys.keys.planCountPrefix(service.id),
      },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

/** Writes a layer as a service older than the counters did: the layer and its public id, nothing counted. */
async function oldLayer(service: Service, l: Layer) {
  await client.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...s.keys.keys.layer(service.workspace_id, service.id, l.id),
        entity: s.keys.entities.layer,
        ...l,
      },
    }),
  );
  await client.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...s.keys.keys.publicId(service.workspace_id, l.public_id),
        entity: s.keys.entities.publicId,
        kind: 'layer',
        target_id: l.id,
        service_id: service.id,
        member_of_count: 0,
      },
    }),
  );
}

const refs = (p: DeletionPlan) => ({
  styles: Object.fromEntries(p.style_references.map((r) => [r.style, r.references])),
  roles: Object.fromEntries(p.role_references.map((r) => [r.role_id, r.references])),
});

describe('deletion plan counters', () => {
  it('start at zero with the service and follow creates, updates and deletes exactly', async () => {
    const { ws, service } = await fixture();
    expect(await counted(service)).toEqual({ layers: 0, styles: {}, roles: {} });
    const [red, blue] = [await style(ws), await style(ws)];
    const editor = await role();
    const a = layer(service, { default_style: red, styles: [blue], allowed_roles: [editor, 'viewer'] });
    const b = layer(service, { default_style: red });
    await s.layers.create(a);
    await s.layers.create(b);
    expect(await counted(service)).toEqual({
      layers: 2,
      styles: { [red]: 2, [blue]: 1 },
      roles: { [editor]: 1 },
    });

    const a2: Layer = { ...a, default_style: blue, styles: [], allowed_roles: [], version: 2 };
    await s.layers.update(a, a2);
    expect(await counted(service)).toEqual({ layers: 2, styles: { [red]: 1, [blue]: 1 }, roles: {} });
    expect(await counted(service)).toEqual(await walked(service));

    await s.layers.delete(b);
    const p = await plan(service);
    expect(p.layers).toEqual({ count: 1, items: [{ id: a.id, public_id: a.public_id }], truncated: false });
    expect(refs(p)).toEqual({ styles: { [blue]: 1 }, roles: {} });
    expect(p.total).toBe(2);
  });

  it('do not change when a create is refused (public id taken, unknown style or role)', async () => {
    const { ws, service } = await fixture();
    const red = await style(ws);
    const first = layer(service, { default_style: red });
    await s.layers.create(first);
    const before = await counterItems(service);
    await expect(
      s.layers.create(layer(service, { public_id: first.public_id, default_style: red })),
    ).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(s.layers.create(layer(service, { default_style: 'no-such-style' }))).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(s.layers.create(layer(service, { allowed_roles: ['no-such-role'] }))).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    expect(await counterItems(service)).toEqual(before);
    expect(await counted(service)).toEqual({ layers: 1, styles: { [red]: 1 }, roles: {} });
  });

  it('stay exact under concurrent creates, spread over the shards', async () => {
    const { ws, service } = await fixture();
    const red = await style(ws);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => s.layers.create(layer(service, { default_style: red }))),
    );
    // DynamoDB Local never raises TransactionConflict; on AWS a lost create is a 503 and changes nothing.
    const created = results.filter((r) => r.status === 'fulfilled').length;
    expect(created).toBe(40);
    expect(await counted(service)).toEqual({ layers: 40, styles: { [red]: 40 }, roles: {} });
    const shards = (await counterItems(service)).filter((i) => i.part === 'layers');
    expect(shards.length).toBeGreaterThan(1);
    expect(shards.every((i) => (i.n as number) < 40)).toBe(true);
    const p = await plan(service);
    expect(p.layers.count).toBe(40);
    expect(p.layers.items).toHaveLength(40);
  });

  it('report a truncated list with the exact count past the list limit', async () => {
    const { service } = await fixture();
    const limit = s.deletionDomain.PLAN_LIST_LIMIT;
    for (let i = 0; i < limit + 5; i += 15) {
      await Promise.all(
        Array.from({ length: Math.min(15, limit + 5 - i) }, () => s.layers.create(layer(service))),
      );
    }
    const p = await plan(service);
    expect(p.layers.count).toBe(limit + 5);
    expect(p.layers.items).toHaveLength(limit);
    expect(p.layers.truncated).toBe(true);
  });

  it('make no audit change: counter writes are bookkeeping, not catalog entities', () => {
    const service = { id: randomUUID(), workspace_id: randomUUID() } as Service;
    const l = layer(service, { default_style: 'red', allowed_roles: ['r1'] });
    const items = s.counters.layerCountChanges('t', undefined, l).map((g) => g.item);
    expect(items.length).toBeGreaterThanOrEqual(2);
    expect(s.audit.changesOf(items)).toEqual([]);
    for (const i of items)
      expect(s.keys.describeKey(i.Update?.Key as { PK: string; SK: string })).toBeUndefined();
  });

  it('are recounted once for a service older than them, and exact from then on', async () => {
    const { ws, service } = await fixture();
    const red = await style(ws);
    // A service from before the counters: no base, and layers written without counting.
    await client.send(
      new DeleteCommand({ TableName: table, Key: s.keys.keys.planCountBase(ws.id, service.id) }),
    );
    const old = Array.from({ length: 7 }, () => layer(service, { default_style: red }));
    for (const l of old) await oldLayer(service, l);
    // One old layer deleted after the counters arrived: its delete counted down from nothing.
    await s.layers.delete(old[0] as Layer);
    await s.layers.create(layer(service, { default_style: red }));
    await expect(counted(service)).rejects.toThrow('no base');

    // The read-only plan walks and writes nothing; deleteService's plan records the base.
    expect((await plan(service)).layers.count).toBe(7);
    await expect(counted(service)).rejects.toThrow('no base');
    const p = await deletionPlan(service);
    expect(p.layers.count).toBe(7);
    expect(refs(p).styles).toEqual({ [red]: 7 });
    // The walk wrote the base: the counters now hold the truth, and keep it.
    expect(await counted(service)).toEqual(await walked(service));
    await s.layers.create(layer(service));
    await s.layers.delete(old[1] as Layer);
    expect(await counted(service)).toEqual({ layers: 7, styles: { [red]: 6 }, roles: {} });
    expect(await counted(service)).toEqual(await walked(service));
  });

  it('refuse a recount when a counted write committed after the counters were read', async () => {
    const { ws, service } = await fixture();
    await client.send(
      new DeleteCommand({ TableName: table, Key: s.keys.keys.planCountBase(ws.id, service.id) }),
    );
    await s.layers.create(layer(service));
    const reading = await s.counters.readPlanCounters(db(), table, ws.id, service.id);
    if (reading.exact) throw new Error('expected no base');
    const truth = s.counters.emptyTallies();
    truth.layers = 1;
    // A create lands between the read and the recount's commit: the stale base is refused.
    await s.layers.create(layer(service));
    expect(await s.counters.writeBase(db(), table, ws.id, service.id, reading, truth)).toBe(false);
    await expect(counted(service)).rejects.toThrow('no base');
    expect((await deletionPlan(service)).layers.count).toBe(2);
    expect((await counted(service)).layers).toBe(2);
  });

  it('go with an empty service and with a recursively deleted one', async () => {
    const starter = { startDeletion: async () => {} };
    const empty = await fixture();
    const l = layer(empty.service);
    await s.layers.create(l);
    await s.layers.delete(l);
    const outcome = await s.deletionDomain.deleteService(
      { deletions: s.deletions, starter },
      { workspace: empty.ws, service: empty.service, recurse: false, createdBy: 'test' },
    );
    expect(outcome).toEqual({ deleted: true });
    expect(await counterItems(empty.service)).toEqual([]);

    const { ws, service } = await fixture();
    const red = await style(ws);
    await Promise.all(
      Array.from({ length: 12 }, () => s.layers.create(layer(service, { default_style: red }))),
    );
    await expect(
      s.deletionDomain.deleteService(
        { deletions: s.deletions, starter },
        { workspace: ws, service, recurse: false, createdBy: 'test' },
      ),
    ).rejects.toMatchObject({ extra: { plan: { layers: { count: 12 } } } });
    const started = await s.deletionDomain.deleteService(
      { deletions: s.deletions, starter },
      { workspace: ws, service, recurse: true, createdBy: 'test' },
    );
    if (!('operation' in started)) throw new Error('expected an operation');
    expect(started.plan.layers.count).toBe(12);
    const steps = new s.steps.DeletionSteps();
    const { id, attempt_count } = started.operation;
    await steps.begin(id, attempt_count);
    for (let i = 0; i < 20 && !(await steps.runBatch(id, attempt_count, 10_000)).done; i++);
    expect((await s.deletions.find(id))?.operation.status).toBe('completed');
    expect(await counterItems(service)).toEqual([]);
  });
});

describe('a workspace deletion plan', () => {
  /** A client that adds up what its Queries read (ScannedCount: the items matched before any filter). */
  function countingClient() {
    const counting = hostDynamo();
    const read = { items: 0 };
    counting.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        read.items += (out.output as { ScannedCount?: number }).ScannedCount ?? 0;
        return out;
      },
      { step: 'initialize', name: 'countScanned' },
    );
    return { counting, read };
  }

  it("counts layers by their services' counters, walking only an older and a dying service, as a walk of the partition would", async () => {
    const { ws, service: counted } = await fixture();
    const custom = await role();
    const made = Array.from({ length: 150 }, (_, i) =>
      layer(counted, i % 3 === 0 ? { allowed_roles: ['viewer', custom] } : {}),
    );
    for (let i = 0; i < made.length; i += 10)
      await Promise.all(made.slice(i, i + 10).map((l) => s.layers.create(l)));

    // A service from before the counters: no counter item at all, layers written without counting.
    const older = serviceRecord(ws.id, name());
    await s.services.create(older);
    await client.send(
      new DeleteCommand({ TableName: table, Key: s.keys.keys.planCountBase(ws.id, older.id) }),
    );
    for (const l of Array.from({ length: 3 }, () => layer(older, { allowed_roles: [custom] })))
      await oldLayer(older, l);

    // A service being deleted: two of its four layers already removed by a chunk (its counters stay until its end).
    const dying = serviceRecord(ws.id, name());
    await s.services.create(dying);
    const doomed = Array.from({ length: 4 }, () => layer(dying));
    for (const l of doomed) await s.layers.create(l);
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: s.keys.keys.service(ws.id, dying.id),
        UpdateExpression: 'SET #s = :d',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'deleting' },
      }),
    );
    for (const l of doomed.slice(0, 2))
      await client.send(
        new DeleteCommand({ TableName: table, Key: s.keys.keys.layer(ws.id, dying.id, l.id) }),
      );

    const { counting, read } = countingClient();
    try {
      const p = await s.plans.planWorkspace(counting, table, ws);
      expect(p.layers.count).toBe(150 + 3 + 2);
      expect(p.layers.items).toHaveLength(100);
      expect(p.layers.truncated).toBe(true);
      expect(p.role_references).toEqual([{ role_id: custom, references: 50 + 3 }]);
      expect(p.workspace_items).toMatchObject({ services: 3 });
      // Every layer, every counted item of the workspace, and the workspace itself.
      expect(p.total).toBe(155 + Object.values(p.workspace_items ?? {}).reduce((a, b) => a + b, 0) + 1);
      // The first layers are the first in key order, with their service, as the partition lists them.
      const listed = await client.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
          ExpressionAttributeValues: {
            ':p': s.keys.keys.workspacePartition(ws.id),
            ':s': s.keys.keys.layerPrefixAll,
          },
          ConsistentRead: true,
          Limit: 100,
        }),
      );
      expect(p.layers.items).toEqual(
        (listed.Items ?? []).map((l) => ({ id: l.id, public_id: l.public_id, service_id: l.service_id })),
      );
      // What it read: its first 100 layers, the other two services' 5, counters and the other entities;
      // a walk would read the counted service's 150 layers and their 150 public ids.
      expect(read.items).toBeLessThan(150);
    } finally {
      counting.destroy();
    }
  });

  it('reads as much at 450 layers as at 150', async () => {
    const sizes: number[] = [];
    for (const n of [150, 450]) {
      const { ws, service } = await fixture();
      const made = Array.from({ length: n }, () => layer(service));
      for (let i = 0; i < made.length; i += 25)
        await Promise.all(made.slice(i, i + 25).map((l) => s.layers.create(l)));
      const { counting, read } = countingClient();
      try {
        const p = await s.plans.planWorkspace(counting, table, ws);
        expect(p.layers.count).toBe(n);
        expect(p.layers.truncated).toBe(true);
      } finally {
        counting.destroy();
      }
      sizes.push(read.items);
    }
    expect(sizes[1]).toBe(sizes[0]);
  });
});
