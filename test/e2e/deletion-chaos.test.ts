import { type DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb.ts';
import { LAYER_CHUNK } from '#store/deletion-steps.ts';
import { keys } from '#store/keys.ts';
import { layerTemplate, seedLayerCopies } from '../../bench/deletion.ts';
import { type ApiResponse, call, uniqueName } from '../support/client.ts';
import { FAULT_HOST, type HostProcess, startHostProcess } from '../support/host-process.ts';
import { freePort } from '../support/ports.ts';
import { hostDynamo } from '../support/store.ts';

/**
 * Chaos: kill -9 the local host while a 5,000-layer recursive deletion runs, start it again on the
 * same data dir, table and DynamoDB, and see the operation resume and complete with nothing left
 * behind. The hosts of this file use a DynamoDB Local of the file's own, started here (so killing a
 * host loses no data): on the run's shared one, under every other file's requests, the 5,000-layer
 * deletion took 13 times as long as alone (445 s against 34 s).
 */
const LAYERS = 5_000;
const TABLE = `chaos-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

let dynamo: DynamoLocal;
let db: DynamoDBDocumentClient;
const hosts: HostProcess[] = [];

function hostEnv(dataDir?: string): Record<string, string> {
  return {
    GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
    GEOPLANE_TABLE_NAME: TABLE,
    GEOPLANE_RATE_LIMIT_RPS: '100000',
    GEOPLANE_RATE_LIMIT_BURST: '100000',
    ...(dataDir ? { GEOPLANE_DATA_DIR: dataDir } : {}),
  };
}

async function startHost(dataDir?: string): Promise<HostProcess> {
  const host = await startHostProcess(hostEnv(dataDir));
  hosts.push(host);
  return host;
}

function on(host: HostProcess) {
  return (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    call(method, path, {
      baseUrl: host.url,
      dataDir: host.dataDir,
      headers: { 'X-API-Key': host.apiKey as string },
      ...(body === undefined ? {} : { body }),
    });
}

/**
 * A deletion fails this test when it stops moving, not when it is slow: on a shared two-core
 * machine a 1,000-layer chunk can take half a minute, but no chunk takes two.
 */
const STALL_MS = 120_000;

function stallWatch() {
  let seen = '';
  let since = Date.now();
  return {
    /** Whether `state` (the operation's phase and progress) has not changed for STALL_MS. */
    stalled(state: string): boolean {
      if (state !== seen) {
        seen = state;
        since = Date.now();
      }
      return Date.now() - since > STALL_MS;
    },
  };
}

/** The host's last lines, for a failure's message. */
const tail = (host: HostProcess) =>
  host
    .output()
    .split('\n')
    .filter((l) => !/^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|access) /.test(l))
    .slice(-60)
    .join('\n');

async function created(res: Promise<ApiResponse>) {
  const r = await res;
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; public_id?: string; name?: string };
}

async function scanAll(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

async function opItem(id: string) {
  const out = await db.send(
    new GetCommand({ TableName: TABLE, Key: keys.deletion(id), ConsistentRead: true }),
  );
  return out.Item as { status: string; phase: string; progress: { total: number; deleted: number } };
}

beforeAll(async () => {
  dynamo = await startDynamoLocal(await freePort());
  db = hostDynamo(dynamo.endpoint);
});

afterAll(async () => {
  for (const host of hosts.reverse()) {
    await host.stop();
    host.cleanup();
  }
  db?.destroy();
  await dynamo?.stop();
});

describe('deletion chaos', () => {
  it(`kill -9 of the host during a ${LAYERS.toLocaleString('en-US')}-layer deletion: it resumes on restart and completes with zero orphans`, async () => {
    const first = await startHost();
    const api = on(first);

    // Through the API: the workspace, the doomed service and a neighbour, a style, three layers
    // (one styled), a neighbour layer, two nested groups depending on the doomed service and one that doesn't.
    const ws = await created(api('POST', '/workspaces', { name: uniqueName('chaos') }));
    const service = (name: string, client = api) =>
      created(
        client('POST', `/workspaces/${ws.id}/services`, {
          name,
          type: 'postgis',
          enabled: false,
          connection: { host: FAULT_HOST, port: 5432, database: 'gis', user: 'reader' },
        }),
      );
    const svc = await service('doomed');
    const other = await service('other');
    await created(
      api('POST', `/workspaces/${ws.id}/styles`, {
        name: 'red',
        format: 'mapbox',
        body: { version: 8, sources: {}, layers: [] },
      }),
    );
    const layer = (serviceId: string, publicId: string, extra: Record<string, unknown> = {}) =>
      created(
        api('POST', `/workspaces/${ws.id}/services/${serviceId}/layers`, {
          source_layer: publicId,
          public_id: publicId,
          enabled: false,
          ...extra,
        }),
      );
    const styled = await layer(svc.id, 'api-0', { default_style: 'red' });
    const grouped = await layer(svc.id, 'api-1');
    const plain = await layer(svc.id, 'api-2');
    const keep = await layer(other.id, 'keep');
    const group = (publicId: string, members: string[]) =>
      created(
        api('POST', `/workspaces/${ws.id}/layer-groups`, {
          public_id: publicId,
          members: members.map((resource) => ({ resource })),
        }),
      );
    const inner = await group('inner', ['api-1', 'keep']);
    const outer = await group('outer', ['inner']);
    const survivor = await group('survivor', ['keep']);

    // The rest, as copies of the API-created items (half of them styled).
    const templates = [
      await layerTemplate(db, TABLE, ws.id, svc.id, styled.id),
      await layerTemplate(db, TABLE, ws.id, svc.id, plain.id),
    ];
    const seeded = await seedLayerCopies({
      db,
      table: TABLE,
      templates,
      count: LAYERS - 3,
      publicId: (i) => `seed-${String(i).padStart(5, '0')}`,
    });
    const styleRefs = 1 + (seeded.styleRefs.get('red') ?? 0);
    const style = await db.send(new GetCommand({ TableName: TABLE, Key: keys.style(ws.id, 'red') }));
    expect(style.Item?.layer_ref_count).toBe(styleRefs);
    const plan = await api('GET', `/workspaces/${ws.id}/services/${svc.id}/deletion-plan`);
    expect(plan.status, plan.text).toBe(200);
    expect(plan.body.layers.count).toBe(LAYERS);
    expect(plan.body.style_references).toEqual([{ style: 'red', references: styleRefs }]);
    const total = LAYERS + 2 + 1;
    expect(plan.body.total).toBe(total);

    const started = await api('DELETE', `/workspaces/${ws.id}/services/${svc.id}?recurse=true`);
    expect(started.status, started.text).toBe(202);
    const opId = started.body.id as string;

    // Kill the host in the middle of the layers phase (two chunks committed: the first one removed).
    // The wait is for a stall, not a time (stallWatch): a full run shares the machine with other hosts.
    const reaching = stallWatch();
    for (;;) {
      const op = await opItem(opId);
      expect(op.status).not.toBe('completed');
      if (op.status === 'running' && op.phase === 'layers' && op.progress.deleted > 2 + LAYER_CHUNK) break;
      if (reaching.stalled(`${op.status}/${op.phase}/${op.progress.deleted}`))
        throw new Error(
          `the deletion did not reach its layers: ${JSON.stringify(op.progress)}\n${tail(first)}`,
        );
      await new Promise((r) => setTimeout(r, 10));
    }
    const exited = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await exited;
    const killed = await opItem(opId);
    expect(killed.status).toBe('running');
    expect(killed.progress.deleted).toBeGreaterThan(2);
    expect(killed.progress.deleted).toBeLessThan(total);
    const layersLeft = (await scanAll()).filter((i) => (i.SK as string).startsWith(keys.layerPrefix(svc.id)));
    // Every layer not yet counted is still there; some counted ones may be (their chunk's removal was cut).
    expect(layersLeft.length).toBeGreaterThanOrEqual(LAYERS - (killed.progress.deleted - 2));
    expect(layersLeft.length).toBeLessThan(LAYERS);

    // Same data dir, table and DynamoDB: the new host resumes the operation on start.
    const second = await startHost(first.dataDir);
    expect(second.output()).toMatch(/resumed 1 unfinished deletion/);
    const api2 = on(second);
    let done: ApiResponse | undefined;
    const resuming = stallWatch();
    for (;;) {
      done = await api2('GET', `/deletions/${opId}`);
      expect(done.status, done.text).toBe(200);
      expect(done.body.status).not.toBe('failed');
      if (done.body.status === 'completed') break;
      if (resuming.stalled(`${done.body.phase}/${done.body.progress.deleted}`))
        throw new Error(
          `the resumed deletion did not complete: ${JSON.stringify(done.body.progress)}\n${tail(second)}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(done.body).toMatchObject({ phase: 'done', attempt_count: 1, progress: { total, deleted: total } });

    // Zero orphans: a full scan finds nothing of the service, its layers, their markers or its groups.
    const doomedIds = new Set([svc.id, inner.id, outer.id, styled.id, grouped.id, plain.id, ...seeded.ids]);
    const doomedPublicIds = new Set(['api-0', 'api-1', 'api-2', 'inner', 'outer', ...seeded.publicIds]);
    const orphans = (await scanAll()).filter((i) => {
      if (i.PK !== keys.workspacePartition(ws.id))
        // The deletion's record and the audit trail (refusal tallies too) outlive what they describe (ADR 0094, 0109).
        return (
          JSON.stringify(i).includes(svc.id) &&
          !['DeletionOperation', 'AuditRecord', 'AuditRefusalTally'].includes(String(i.entity))
        );
      const sk = i.SK as string;
      return (
        sk.startsWith(keys.layerPrefix(svc.id)) ||
        (sk.startsWith('PUBID#') && doomedPublicIds.has(sk.slice('PUBID#'.length))) ||
        doomedIds.has(i.id as string) ||
        doomedIds.has(i.target_id as string) ||
        sk === keys.service(ws.id, svc.id).SK ||
        sk === keys.serviceName(ws.id, 'doomed').SK ||
        sk === keys.layerGroup(ws.id, inner.id).SK ||
        sk === keys.layerGroup(ws.id, outer.id).SK ||
        JSON.stringify(i).includes(svc.id)
      );
    });
    expect(orphans).toEqual([]);

    // Neighbours survive with consistent counts; the style's references are all released.
    const get = async (key: { PK: string; SK: string }) =>
      (await db.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item;
    expect((await get(keys.style(ws.id, 'red')))?.layer_ref_count).toBe(0);
    expect((await get(keys.publicId(ws.id, 'keep')))?.member_of_count).toBe(1);
    expect((await get(keys.activeDeletions(ws.id)))?.count ?? 0).toBe(0);
    expect((await api2('GET', `/workspaces/${ws.id}/layer-groups/${survivor.id}`)).status).toBe(200);
    expect((await api2('GET', `/workspaces/${ws.id}/services/${other.id}/layers/${keep.id}`)).status).toBe(
      200,
    );
    // The name is free again.
    expect((await service('doomed', api2)).id).not.toBe(svc.id);
  }, 900_000);
});
