/**
 * The deletion run of `npm run bench`: how long does a recursive `deleteService` of a service
 * with 1,000 and 10,000 layers take on the local host, and how many DynamoDB write units does the
 * workflow consume per deleted item (target ≤ 1, linear in the size)? Runs on the scaling stack
 * (DynamoDB Local in memory, a host without PostGIS) inside `npm run bench`, or on a stack of its
 * own with `npx tsx bench/deletion.ts` (prints the section only).
 *
 * Layers are seeded the way the scaling run seeds them (ADR 0021): one layer is created through
 * the API, then copies of its stored item and its public id marker are written with
 * BatchWriteItem, only the attributes naming the layer changed (keys from `shared/store/keys.ts`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { usedStyles } from '#domain/layers.ts';
import { startDynamoLocal } from '#infra/local/dynamodb.ts';
import { keys } from '#store/keys.ts';
import { FAULT_HOST, startHostProcess } from '../test/support/host-process.ts';
import { freePort } from '../test/support/ports.ts';
import { cleanup, installExitHandlers, onCleanup, stopStarting } from './cleanup.ts';
import { call, send } from './latency.ts';
import { seedClient } from './seed.ts';
import { fixed, ratio, table, thousands, verdict } from './stats.ts';

type Item = Record<string, unknown>;

// ---- seeding (also used by test/e2e/deletion-chaos.test.ts) -------------------------------------

/** A stored layer item and its public id marker, as the API wrote them. */
export interface LayerTemplate {
  layer: Item;
  marker: Item;
}

/** Reads an API-created layer and its marker straight from the table (the template of the copies). */
export async function layerTemplate(
  db: DynamoDBDocumentClient,
  tableName: string,
  workspaceId: string,
  serviceId: string,
  layerId: string,
): Promise<LayerTemplate> {
  const get = async (key: { PK: string; SK: string }) => {
    const out = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    if (!out.Item) throw new Error(`item ${key.PK} ${key.SK} not found`);
    return out.Item;
  };
  const layer = await get(keys.layer(workspaceId, serviceId, layerId));
  const marker = await get(keys.publicId(workspaceId, layer.public_id as string));
  return { layer, marker };
}

export interface CopyPlan {
  db: DynamoDBDocumentClient;
  table: string;
  /** Round robin over these (markers of layers in no group: `member_of_count` is reset to 0). */
  templates: LayerTemplate[];
  count: number;
  publicId: (i: number) => string;
  concurrency?: number;
}

export interface CopyResult {
  ids: string[];
  publicIds: string[];
  items: number;
  ms: number;
  /** Layer references added per style (the seeding adds them to the style's `layer_ref_count`). */
  styleRefs: Map<string, number>;
}

/** BatchWriteItem takes 25 items at most; 12 layers (24 items) keep each layer's pair in one request. */
const LAYERS_PER_BATCH = 12;

/**
 * Writes `count` copies of the template layers: a new `id` and `public_id` (and `title` when the
 * template's title is its public id, as `createLayer` defaults it), the product's keys, the
 * marker's `target_id`; every other attribute as the API stored it. Styles the copies use get
 * their `layer_ref_count` raised by the number of copies, as `createLayer` would.
 */
export async function seedLayerCopies(plan: CopyPlan): Promise<CopyResult> {
  const started = Date.now();
  const ids: string[] = [];
  const publicIds: string[] = [];
  const styleRefs = new Map<string, number>();
  let next = 0;
  let items = 0;
  const write = async (batch: Item[]) => {
    let pending = batch;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt > 10) throw new Error(`seeding: ${pending.length} items stayed unprocessed`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
      const out = await plan.db.send(
        new BatchWriteCommand({
          RequestItems: { [plan.table]: pending.map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
      pending = (out.UnprocessedItems?.[plan.table] ?? []).flatMap((r) =>
        r.PutRequest?.Item ? [r.PutRequest.Item] : [],
      );
    }
  };
  const worker = async () => {
    while (next < plan.count) {
      const from = next;
      const to = Math.min(plan.count, from + LAYERS_PER_BATCH);
      next = to;
      const batch: Item[] = [];
      for (let i = from; i < to; i++) {
        const t = plan.templates[i % plan.templates.length] as LayerTemplate;
        const id = randomUUID();
        const publicId = plan.publicId(i);
        const workspaceId = t.layer.workspace_id as string;
        const serviceId = t.layer.service_id as string;
        const layer: Item = {
          ...t.layer,
          ...keys.layer(workspaceId, serviceId, id),
          id,
          public_id: publicId,
          ...(t.layer.title === t.layer.public_id ? { title: publicId } : {}),
        };
        const marker: Item = {
          ...t.marker,
          ...keys.publicId(workspaceId, publicId),
          target_id: id,
          member_of_count: 0,
        };
        batch.push(layer, marker);
        ids.push(id);
        publicIds.push(publicId);
        for (const s of usedStyles(layer as never)) styleRefs.set(s, (styleRefs.get(s) ?? 0) + 1);
      }
      await write(batch);
      items += batch.length;
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency ?? 16 }, worker));
  const workspaceId = plan.templates[0]?.layer.workspace_id as string;
  for (const [style, n] of styleRefs) {
    await plan.db.send(
      new UpdateCommand({
        TableName: plan.table,
        Key: keys.style(workspaceId, style),
        UpdateExpression: 'ADD layer_ref_count :n',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':n': n },
      }),
    );
  }
  // Copies bypass the plan counters (ADR 0101): the service becomes one from before them (no
  // counter base), so its next plan recounts.
  const serviceId = plan.templates[0]?.layer.service_id as string;
  await plan.db.send(
    new DeleteCommand({ TableName: plan.table, Key: keys.planCountBase(workspaceId, serviceId) }),
  );
  return { ids, publicIds, items, ms: Date.now() - started, styleRefs };
}

// ---- measurement --------------------------------------------------------------------------------

/** What the run needs of a stack: a host, its DynamoDB Local and table, a client. */
export interface DeletionStack {
  url: string;
  endpoint: string;
  table: string;
  agent: Agent;
  auth: Record<string, string>;
}

export const SIZES = [1_000, 10_000];
const POLL_MS = 25;
/** Linearity: the per-layer figure of the largest size within this factor of the smallest's. */
const TIME_LINEAR_MAX = 1.5;
const UNITS_LINEAR_MAX = 1.1;
const UNITS_PER_ITEM_MAX = 1;

export interface DeletionRun {
  layers: number;
  /** DynamoDB items the deletion removes (layers, markers, group + marker, service + name marker). */
  items: number;
  groups: number;
  total: number;
  deleted: number;
  wallMs: number;
  /** completed_at − created_at of the operation (server side). */
  opMs: number;
  seedMs: number;
  /** One `GET …/deletion-plan` (the plan a 409 carries: a pass over the service's layers). */
  planMs: number;
  writeUnits: number;
  /** Units the removed items cost at least: Σ ceil(item size / 1 KB), the write sizes of DynamoDB. */
  itemUnits: number;
}

export interface DeletionOutcome {
  runs: DeletionRun[];
  ms: number;
}

/** The DynamoDB item size (attribute names + values, as the developer guide counts it), bytes. */
export function itemBytes(item: Item): number {
  const size = (v: unknown): number => {
    if (v === null || v === undefined) return 1;
    if (typeof v === 'string') return Buffer.byteLength(v);
    if (typeof v === 'number') return Math.ceil(String(Math.abs(v)).replace(/[.-]/g, '').length / 2) + 1;
    if (typeof v === 'boolean') return 1;
    if (Array.isArray(v)) return 3 + v.reduce((s: number, x) => s + 1 + size(x), 0);
    if (typeof v === 'object')
      return 3 + Object.entries(v as Item).reduce((s, [k, x]) => s + 1 + Buffer.byteLength(k) + size(x), 0);
    return 0;
  };
  return Object.entries(item).reduce((s, [k, v]) => s + Buffer.byteLength(k) + size(v), 0);
}

async function partitionItems(db: DynamoDBDocumentClient, tableName: string, pk: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': pk },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** One service of `n` layers (one through the API, n − 1 copies) and a group holding the first. */
async function deleteOnce(
  stack: DeletionStack,
  db: DynamoDBDocumentClient,
  n: number,
  progress: (s: string) => void,
): Promise<DeletionRun> {
  const { agent, auth, url } = stack;
  const ws = await call(agent, 'POST', `${url}/workspaces`, auth, {
    name: `bench-del-${n}-${Date.now().toString(36)}`,
  });
  const svc = await call(agent, 'POST', `${url}/workspaces/${ws.id}/services`, auth, {
    name: 'doomed',
    type: 'postgis',
    connection: { host: FAULT_HOST, port: 5432, database: 'gis', user: 'reader' },
    enabled: false,
  });
  const first = await call(agent, 'POST', `${url}/workspaces/${ws.id}/services/${svc.id}/layers`, auth, {
    source_layer: 'places',
    public_id: 'del-000000',
    enabled: false,
  });
  const template = await layerTemplate(db, stack.table, ws.id, svc.id, first.id);
  await call(agent, 'POST', `${url}/workspaces/${ws.id}/layer-groups`, auth, {
    public_id: 'del-group',
    members: [{ resource: 'del-000000' }],
  });
  progress(`deletion: seeding a service with ${thousands(n)} layers`);
  const seed = await seedLayerCopies({
    db,
    table: stack.table,
    templates: [template],
    count: n - 1,
    publicId: (i) => `del-${String(i + 1).padStart(6, '0')}`,
  });
  // What the deletion will remove, measured before it runs (the service partition is the workspace's).
  const partition = await partitionItems(db, stack.table, keys.workspacePartition(ws.id));
  const doomed = partition.filter((i) => {
    const sk = i.SK as string;
    return (
      sk.startsWith(keys.layerPrefix(svc.id)) ||
      (sk.startsWith('PUBID#') && sk !== 'PUBID#') ||
      sk.startsWith('GROUP#') ||
      sk === keys.service(ws.id, svc.id).SK ||
      sk === keys.serviceName(ws.id, 'doomed').SK
    );
  });
  const itemUnits = doomed.reduce((s, i) => s + Math.ceil(itemBytes(i) / 1024), 0);
  const expectedItems = 2 * n + 2 + 2;
  if (doomed.length !== expectedItems)
    throw new Error(`deletion: expected ${expectedItems} items to delete, found ${doomed.length}`);

  const p0 = performance.now();
  const plan = await call(
    agent,
    'GET',
    `${url}/workspaces/${ws.id}/services/${svc.id}/deletion-plan`,
    auth,
    undefined,
    200,
  );
  const planMs = performance.now() - p0;
  if (plan.layers.count !== n)
    throw new Error(`deletion: the plan counts ${plan.layers.count} layers, not ${n}`);

  progress(`deletion: deleting the ${thousands(n)}-layer service`);
  const t0 = performance.now();
  const started = await call(
    agent,
    'DELETE',
    `${url}/workspaces/${ws.id}/services/${svc.id}?recurse=true`,
    auth,
    undefined,
    202,
  );
  let op = started;
  for (;;) {
    const reply = await send(agent, 'GET', `${url}/deletions/${started.id}`, auth);
    if (reply.status !== 200) throw new Error(`GET /deletions answered ${reply.status}: ${reply.text}`);
    op = JSON.parse(reply.text);
    if (op.status === 'completed') break;
    if (op.status === 'failed') throw new Error(`deletion failed: ${op.last_error}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const wallMs = performance.now() - t0;
  const stored = await db.send(
    new GetCommand({ TableName: stack.table, Key: keys.deletion(op.id), ConsistentRead: true }),
  );
  const left = (await partitionItems(db, stack.table, keys.workspacePartition(ws.id))).filter((i) =>
    doomed.some((d) => d.SK === i.SK),
  );
  if (left.length) throw new Error(`deletion: ${left.length} items of the service are left`);
  return {
    layers: n,
    items: doomed.length,
    groups: 1,
    total: op.progress.total,
    deleted: op.progress.deleted,
    wallMs,
    opMs: Date.parse(op.completed_at) - Date.parse(op.created_at),
    seedMs: seed.ms,
    planMs,
    writeUnits: Number(stored.Item?.write_units ?? 0),
    itemUnits,
  };
}

export async function measureDeletion(
  stack: DeletionStack,
  progress: (s: string) => void,
  sizes = SIZES,
): Promise<DeletionOutcome> {
  const t = Date.now();
  const db = seedClient(stack.endpoint);
  try {
    const runs: DeletionRun[] = [];
    for (const n of sizes) {
      const run = await deleteOnce(stack, db, n, progress);
      progress(
        `deletion: ${thousands(n)} layers in ${fixed(run.wallMs / 1000, 2)} s, ${thousands(run.writeUnits)} write units`,
      );
      runs.push(run);
    }
    return { runs, ms: Date.now() - t };
  } finally {
    db.destroy();
  }
}

/** The report's deletion section; adds its verdict lines to `verdicts`. */
export function deletionSection(o: DeletionOutcome, verdicts: string[], heading = '## 4.'): string {
  const rows = o.runs.map((r) => [
    thousands(r.layers),
    thousands(r.items),
    `${thousands(r.deleted)} / ${thousands(r.total)}`,
    fixed(r.planMs / 1000, 2),
    fixed(r.wallMs / 1000, 2),
    fixed(r.opMs / 1000, 2),
    fixed((r.wallMs / r.layers) * 1000, 0),
    thousands(r.writeUnits),
    fixed(r.writeUnits / r.items, 3),
    fixed(r.writeUnits / r.layers, 3),
    thousands(r.itemUnits),
  ]);
  const reported = o.runs.every((r) => r.writeUnits > 0);
  const small = o.runs[0];
  const large = o.runs[o.runs.length - 1];
  if (small && large && reported) {
    const perItem = large.writeUnits / large.items;
    verdicts.push(
      `- deleteService recurse: write units per deleted item ≤ ${UNITS_PER_ITEM_MAX}: ${verdict(perItem <= UNITS_PER_ITEM_MAX)} ` +
        `(${fixed(perItem, 3)} with ${thousands(large.layers)} layers: ${thousands(large.writeUnits)} units for ${thousands(large.items)} items)`,
    );
    const u = (r: DeletionRun) => r.writeUnits / r.layers;
    const w = (r: DeletionRun) => r.wallMs / r.layers;
    verdicts.push(
      `- deleteService recurse: write units linear in the layers (per layer, ${thousands(large.layers)} vs ${thousands(small.layers)}, ratio ≤ ${UNITS_LINEAR_MAX}): ` +
        `${verdict(u(large) <= UNITS_LINEAR_MAX * u(small))} (${ratio(u(large), u(small))}: ${fixed(u(large), 3)} vs ${fixed(u(small), 3)})`,
      `- deleteService recurse: time linear in the layers (per layer, ${thousands(large.layers)} vs ${thousands(small.layers)}, ratio ≤ ${TIME_LINEAR_MAX}): ` +
        `${verdict(w(large) <= TIME_LINEAR_MAX * w(small))} (${ratio(w(large), w(small))}: ${fixed(w(large) * 1000, 0)} µs vs ${fixed(w(small) * 1000, 0)} µs)`,
    );
  }
  const unitsNote = reported
    ? 'DynamoDB Local returns `ConsumedCapacity` for these writes (`ReturnConsumedCapacity: TOTAL`), computed from item sizes ' +
      'like DynamoDB does (1 unit per KB written per item; 2 per KB in a transaction). '
    : '**DynamoDB Local reported no consumed capacity** (`write_units` 0): the "item units" column (Σ ceil(item size / 1 KB) ' +
      'over the removed items, the least DynamoDB would charge) is the only figure. ';
  return [
    `${heading} Recursive deletion: time and DynamoDB write units of \`deleteService?recurse=true\``,
    '',
    'A workspace per size with one disabled PostGIS service holding N draft layers and one layer group (containing the ' +
      'first layer): the first layer and the group through the API, N − 1 layers seeded with BatchWriteItem as copies of the ' +
      "API-created layer item and its public id marker (new id, public_id, keys from the product's key builders; the same " +
      'seeding as the chaos test). Wall time: from sending `DELETE …/services/{id}?recurse=true` (202) to the first ' +
      `\`GET /deletions/{id}\` answering \`completed\` (polled every ${POLL_MS} ms over one keep-alive connection); ` +
      "op time: the operation's own `completed_at − created_at`. The workflow runs in the host process (the deployed ASL through " +
      'aws-local-stepfunctions, one batch task looping over chunks of up to 1,000 layers: a checkpoint write, then the public id ' +
      'markers read by BatchGetItem and deleted by BatchWriteItem, then the layers, 4 batches of 25 in flight). DynamoDB Local **in memory** (the scaling ' +
      "stack's; on disk it writes ~350 items/s here). Write units: the operation's `write_units` attribute read from the table " +
      '(the sum of `ConsumedCapacity` of its writes; not in the API body). Items = layers + their markers + the group and its ' +
      'marker + the service and its name marker. ' +
      unitsNote +
      'Not counted by the workflow: the final transaction (service, name marker, mosaic, counter, completion: ~10 units) and ' +
      'the `begin` update. Plan s: one `GET …/deletion-plan` before the deletion, its first: the one-time recount of a ' +
      'service whose layers bypassed the plan counters (seeded copies; ADR 0101), a projected pass over its layers.',
    '',
    table(
      [
        'layers',
        'items deleted',
        'progress',
        'plan s',
        'wall s',
        'op s',
        'µs / layer',
        'write units',
        'units / item',
        'units / layer',
        'item units (Σ ceil KB)',
      ],
      rows,
      '---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:',
    ),
    '',
    `Seeding (not measured): ${o.runs.map((r) => `${thousands(r.layers - 1)} copies in ${fixed(r.seedMs / 1000, 1)} s`).join(', ')}; ` +
      `the whole section took ${fixed(o.ms / 1000, 0)} s.`,
  ].join('\n');
}

// ---- standalone: `npx tsx bench/deletion.ts` ------------------------------------------------------

/** DynamoDB Local in memory and a local host without PostGIS, registered for cleanup. */
export async function startDeletionStack(): Promise<DeletionStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-del-'));
  onCleanup('deletion: data dir', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const dynamoPromise = startDynamoLocal(port);
  onCleanup('deletion: DynamoDB Local', stopStarting(dynamoPromise, `-port\u0000${port}\u0000`));
  const dynamo = await dynamoPromise;
  const hostPromise = startHostProcess({
    GEOPLANE_DATA_DIR: dataDir,
    GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
    GEOPLANE_RATE_LIMIT_RPS: '1000000',
    GEOPLANE_RATE_LIMIT_BURST: '1000000',
  });
  onCleanup('deletion: local host', stopStarting(hostPromise, `GEOPLANE_DATA_DIR=${dataDir}\u0000`));
  const host = await hostPromise;
  if (!host.apiKey) throw new Error(`the host wrote no bootstrap key in ${dataDir}`);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(dataDir, 'tls-cert.pem')),
  });
  onCleanup('deletion: HTTPS client', () => agent.destroy());
  return {
    url: host.url,
    endpoint: dynamo.endpoint,
    table: 'geoplane',
    agent,
    auth: { 'X-API-Key': host.apiKey },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  installExitHandlers(10 * 60_000);
  const t0 = Date.now();
  const progress = (s: string) =>
    process.stderr.write(`[deletion ${((Date.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${s}\n`);
  const sizes = process.env.BENCH_DELETION_SIZES?.split(',').map(Number) ?? SIZES;
  startDeletionStack()
    .then((stack) => measureDeletion(stack, progress, sizes))
    .then(async (outcome) => {
      await cleanup();
      const verdicts: string[] = [];
      const section = deletionSection(outcome, verdicts);
      process.stdout.write(`${verdicts.join('\n')}\n\n${section}\n`);
      process.exit(0);
    })
    .catch(async (error) => {
      process.stderr.write(`deletion benchmark failed: ${(error as Error).stack ?? error}\n`);
      await cleanup();
      process.exit(1);
    });
}
