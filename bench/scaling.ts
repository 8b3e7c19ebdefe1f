/**
 * The scaling run of `npm run bench` (ADR 0021): does a page of listLayers cost the same in a
 * service with 100,000 layers as in one with 100? Its own DynamoDB Local (in memory) and local
 * host (no PostGIS), so the seeding can run while the main host initialises its PostGIS and the
 * main table stays as small as in earlier runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamoLocal } from '#infra/local/dynamodb.ts';
import { entities, keys } from '#store/keys.ts';
import { encodeCursor } from '#store/paging.ts';
import { FAULT_HOST, startHostProcess } from '../test/support/host-process.ts';
import { freePort } from '../test/support/ports.ts';
import { onCleanup, stopStarting } from './cleanup.ts';
import { startFloorServer, stopChild } from './floor-process.ts';
import { call, type LatencyCase, type LatencyResult, measureLatency } from './latency.ts';
import { type SeedResult, seedClient, seedLayers } from './seed.ts';
import { fixed, mean, percentile, ratio, table, thousands, verdict } from './stats.ts';

export const SMALL = 100;
/** The middle size of the deletion plan's measurement (issue #15: "0.40 s at 10,000"). */
export const MID = 10_000;
export const LARGE = 100_000;
/** Issue #15's target for a deletion plan at 100,000 layers (ADR 0101). */
const PLAN_P50_MAX_MS = 50;
const FIRST_LIMIT = 100;
const MIDDLE_LIMIT = 50;
const SEED_CONCURRENCY = 16;
const RATIO_MAX = 1.1;
const TABLE = 'geoplane';
/** Names of everything this module registers for cleanup start with this (see `stopNow`). */
export const CLEANUP_PREFIX = 'scaling:';

export interface ScalingPlan {
  seedBudgetMs: number;
  warmup: number;
  rounds: number;
  perRound: number;
  budgetMs: () => number;
}

interface Target {
  workspaceId: string;
  serviceId: string;
  base: string;
}

/** The prepared scaling stack: three services, one with 100 layers (API) and two seeded. */
export interface ScalingSetup extends ScalingStack {
  small: Target;
  mid: Target;
  large: Target;
  seed: SeedResult;
  midSeed: SeedResult;
  apiCreateMs: number;
}

const publicId = (i: number) => `scale-${String(i).padStart(6, '0')}`;

/** Attributes that name the layer (or its marker) itself; every other one must be equal. */
const OWN = new Set([
  'PK',
  'SK',
  'id',
  'workspace_id',
  'service_id',
  'public_id',
  'title',
  'target_id',
  'created_at',
  'updated_at',
]);

/** Throws unless the seeded item has the API-created item's attributes, types and shared values. */
function sameShape(api: Record<string, unknown>, seeded: Record<string, unknown>, what: string): void {
  const a = Object.keys(api).sort().join(', ');
  const s = Object.keys(seeded).sort().join(', ');
  if (a !== s) throw new Error(`${what}: the seeded item has attributes [${s}], the API's has [${a}]`);
  for (const k of Object.keys(api)) {
    const same = OWN.has(k)
      ? typeof api[k] === typeof seeded[k]
      : JSON.stringify(api[k]) === JSON.stringify(seeded[k]);
    if (!same) {
      throw new Error(
        `${what}: attribute ${k} is ${JSON.stringify(seeded[k])} when seeded, ${JSON.stringify(api[k])} via the API`,
      );
    }
  }
}

/** Compares one API-created layer (and its public id marker) with one seeded layer, as stored. */
async function compareItems(endpoint: string, small: Target, apiLayerId: string, large: Target) {
  const db = seedClient(endpoint);
  try {
    const get = async (key: { PK: string; SK: string }) => {
      const out = await db.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }));
      if (!out.Item) throw new Error(`item ${key.PK} ${key.SK} not found`);
      return out.Item;
    };
    const apiLayer = await get(keys.layer(small.workspaceId, small.serviceId, apiLayerId));
    const apiMarker = await get(keys.publicId(small.workspaceId, apiLayer.public_id as string));
    const partition = keys.workspacePartition(large.workspaceId);
    const out = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
        ExpressionAttributeValues: { ':p': partition, ':s': keys.layerPrefix(large.serviceId) },
        Limit: 1,
      }),
    );
    const seededLayer = out.Items?.[0];
    if (!seededLayer) throw new Error('no seeded layer found');
    const seededMarker = await get(keys.publicId(large.workspaceId, seededLayer.public_id as string));
    sameShape(apiLayer, seededLayer, 'layer item');
    sameShape(apiMarker, seededMarker, 'public id marker');
    if (seededMarker.target_id !== seededLayer.id) throw new Error('seeded marker points elsewhere');
  } finally {
    db.destroy();
  }
}

/** The running scaling stack, still empty. */
export interface ScalingStack {
  url: string;
  endpoint: string;
  agent: Agent;
  floorPort: number;
  auth: Record<string, string>;
  dynamoStartMs: number;
  hostStartMs: number;
}

/**
 * Starts the scaling stack: DynamoDB Local in memory, a local host without PostGIS, a floor
 * server on the same table. Idle once started (run.ts starts it beside the bundling).
 */
export async function startScalingStack(): Promise<ScalingStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-scale-'));
  onCleanup(`${CLEANUP_PREFIX} data dir`, () => rmSync(dataDir, { recursive: true, force: true }));

  let t = Date.now();
  // In memory: on disk, DynamoDB Local writes only ~350 items/s here (ADR 0021).
  const port = await freePort();
  const dynamoPromise = startDynamoLocal(port);
  onCleanup(`${CLEANUP_PREFIX} DynamoDB Local`, stopStarting(dynamoPromise, `-port\u0000${port}\u0000`));
  const dynamo = await dynamoPromise;
  const dynamoStartMs = Date.now() - t;

  t = Date.now();
  const hostPromise = startHostProcess({
    GEOPLANE_DATA_DIR: dataDir,
    GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
    GEOPLANE_RATE_LIMIT_RPS: '1000000',
    GEOPLANE_RATE_LIMIT_BURST: '1000000',
  });
  onCleanup(`${CLEANUP_PREFIX} local host`, stopStarting(hostPromise, `GEOPLANE_DATA_DIR=${dataDir}\u0000`));
  const host = await hostPromise;
  const hostStartMs = Date.now() - t;
  if (!host.apiKey) throw new Error(`the scaling host wrote no bootstrap key in ${dataDir}`);

  // The floor server on this stack's table, for the reference rows (the host's certificate).
  const floor = startFloorServer(dataDir, dynamo.endpoint);
  onCleanup(`${CLEANUP_PREFIX} floor server`, () => stopChild(floor.child));
  const floorPort = await floor.ready;

  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(dataDir, 'tls-cert.pem')),
  });
  onCleanup(`${CLEANUP_PREFIX} HTTPS client`, () => agent.destroy());
  const auth = { 'X-API-Key': host.apiKey };
  return { url: host.url, endpoint: dynamo.endpoint, agent, floorPort, auth, dynamoStartMs, hostStartMs };
}

/**
 * Fills the scaling stack: two workspaces with a disabled PostGIS service each (drafts never
 * touch the source), 100 draft layers created through the API in one, 100,000 seeded in the
 * other (bounded by `seedBudgetMs`), then checks a seeded item against an API-created one.
 */
export async function fillScaling(
  stack: ScalingStack,
  plan: Omit<ScalingPlan, 'budgetMs'>,
  progress: (s: string) => void,
): Promise<ScalingSetup> {
  const { agent, auth, endpoint } = stack;
  const target = async (name: string): Promise<Target> => {
    const ws = await call(agent, 'POST', `${stack.url}/workspaces`, auth, { name });
    const svc = await call(agent, 'POST', `${stack.url}/workspaces/${ws.id}/services`, auth, {
      name: 'scale',
      type: 'postgis',
      // Disabled: never connected to (drafts are stored without touching their source).
      connection: { host: FAULT_HOST, port: 5432, database: 'gis', user: 'reader' },
      enabled: false,
    });
    return {
      workspaceId: ws.id,
      serviceId: svc.id,
      base: `${stack.url}/workspaces/${ws.id}/services/${svc.id}/layers`,
    };
  };
  const small = await target(`bench-scale-${SMALL}`);
  const mid = await target(`bench-scale-${MID}`);
  const large = await target(`bench-scale-${LARGE}`);

  // The API creates and the seeding run side by side (different workspaces; nothing is measured).
  progress(
    `scaling: creating ${SMALL} layers through the API, seeding ${thousands(LARGE)} with BatchWriteItem`,
  );
  const createSmall = async () => {
    const t0 = Date.now();
    let first = '';
    for (let i = 0; i < SMALL; i++) {
      const layer = await call(agent, 'POST', small.base, auth, {
        source_layer: 'places',
        public_id: publicId(i),
        enabled: false,
      });
      first ||= layer.id;
    }
    return { apiLayerId: first, apiCreateMs: Date.now() - t0 };
  };
  const seedInto = (t: Target, count: number, budgetMs: number) =>
    seedLayers({
      endpoint,
      table: TABLE,
      workspaceId: t.workspaceId,
      serviceId: t.serviceId,
      sourceLayer: 'places',
      count,
      publicId,
      concurrency: SEED_CONCURRENCY,
      budgetMs,
      progress,
    });
  const [{ apiLayerId, apiCreateMs }, seed] = await Promise.all([
    createSmall(),
    seedInto(large, LARGE, plan.seedBudgetMs),
  ]);
  const midSeed = await seedInto(mid, MID, plan.seedBudgetMs);
  await countSeeded(endpoint, [
    [mid, midSeed.layers],
    [large, seed.layers],
  ]);
  progress(
    `scaling: seeded ${thousands(seed.layers)} layers (${thousands(seed.items)} items) in ${fixed(seed.ms / 1000, 1)} s` +
      (seed.complete ? '' : ' — stopped at the seeding budget'),
  );
  await compareItems(endpoint, small, apiLayerId, large);
  return { ...stack, small, mid, large, seed, midSeed, apiCreateMs };
}

/**
 * Seeding writes layers without the plan counters (ADR 0101), so it records what it wrote as the
 * counters' base, as a recount of an older service would (the seeded layers have no styles or
 * custom roles; the services had no layer before).
 */
async function countSeeded(endpoint: string, seeded: [Target, number][]) {
  const db = seedClient(endpoint);
  try {
    for (const [t, n] of seeded) {
      await db.send(
        new PutCommand({
          TableName: TABLE,
          Item: {
            ...keys.planCountBase(t.workspaceId, t.serviceId),
            entity: entities.planCounter,
            part: 'base',
            n,
          },
        }),
      );
    }
  } finally {
    db.destroy();
  }
}

/**
 * What every plan did before ADR 0101, timed straight against DynamoDB Local: the walk over the
 * service's layers (consistent pages, the plan's projection). Checks it finds `count` layers.
 */
async function walkMs(endpoint: string, t: Target, count: number): Promise<number> {
  const db = seedClient(endpoint);
  try {
    const t0 = performance.now();
    let found = 0;
    // Page by page as forEachPrefixPage reads (ADR 0097): each page's key condition starts at the
    // last key, which is ExclusiveStartKey only to step over it (DynamoDB Local walks up to one).
    const pk = keys.workspacePartition(t.workspaceId);
    const prefix = keys.layerPrefix(t.serviceId);
    let last: string | undefined;
    for (;;) {
      const out = await db.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'PK = :p AND SK BETWEEN :a AND :z',
          ExpressionAttributeValues: { ':p': pk, ':a': last ?? prefix, ':z': `${prefix}\u{10FFFF}` },
          ProjectionExpression: '#id, public_id, service_id, default_style, styles, allowed_roles',
          ExpressionAttributeNames: { '#id': 'id' },
          ConsistentRead: true,
          ...(last ? { ExclusiveStartKey: { PK: pk, SK: last } } : {}),
        }),
      );
      found += out.Items?.length ?? 0;
      if (!out.LastEvaluatedKey) break;
      last = out.LastEvaluatedKey.SK as string;
    }
    const ms = performance.now() - t0;
    if (found !== count) throw new Error(`the walk found ${found} layers, not ${count}`);
    return ms;
  } finally {
    db.destroy();
  }
}

/** The deletion plan's URL of a target's workspace (it holds the target's service alone). */
const workspacePlanUrl = (url: string, t: Target) => `${url}/workspaces/${t.workspaceId}/deletion-plan`;

/** The deletion plan's URL of a target. */
const planUrl = (url: string, t: Target) =>
  `${url}/workspaces/${t.workspaceId}/services/${t.serviceId}/deletion-plan`;

function planCheck(count: number) {
  return (body: unknown) => {
    const plan = body as { layers?: { count?: number; items?: unknown[] } };
    if (plan.layers?.count !== count)
      throw new Error(`expected a plan of ${count} layers, got ${plan.layers?.count}`);
    if (plan.layers.items?.length !== Math.min(count, 100))
      throw new Error('a plan without its first layers');
  };
}

export interface ScalingOutcome {
  setup: ScalingSetup;
  /** The walk over each seeded service's layers that every plan did before ADR 0101 (straight to DynamoDB Local), ms. */
  recounts: { mid: number; large: number };
  results: LatencyResult[];
  truncated: boolean;
  budgetMs: number;
  middleIndex: number;
}

function pageCheck(target: Target, n: number) {
  return (body: unknown) => {
    const layers = (body as { layers?: { service_id?: string }[] }).layers ?? [];
    if (layers.length !== n) throw new Error(`expected a page of ${n} layers, got ${layers.length}`);
    if (layers.some((l) => l.service_id !== target.serviceId)) throw new Error('a layer of another service');
  };
}

/**
 * Walks to the middle of each service through the API's own cursors, then measures four pages
 * through the API and three reference Queries straight to DynamoDB Local (the floor server).
 */
export async function measureScaling(
  setup: ScalingSetup,
  plan: ScalingPlan,
  progress: (s: string) => void,
): Promise<ScalingOutcome> {
  const { agent, auth, small, large } = setup;
  const smallMiddle = await call(agent, 'GET', `${small.base}?limit=${SMALL / 2}`, auth);
  // The cursor the API returns after the first half of the large service is the LastEvaluatedKey
  // of the half's last layer, encoded by the product's own encodeCursor: built here from the
  // seeded ids in key order (walking 50 pages of 1000 to get it took ~20 s on a busy machine); the
  // page after it is checked to start at the next layer.
  const middleIndex = Math.floor(setup.seed.layers / 2);
  const sorted = setup.seed.ids.map((id) => keys.layer(large.workspaceId, large.serviceId, id).SK).sort();
  const last = keys.layer(large.workspaceId, large.serviceId, '');
  const cursor = encodeCursor({ PK: last.PK, SK: sorted[middleIndex - 1] as string });
  const probe = await call(
    agent,
    'GET',
    `${large.base}?limit=1&cursor=${encodeURIComponent(cursor ?? '')}`,
    auth,
  );
  const expected = (sorted[middleIndex] as string).slice(keys.layerPrefix(large.serviceId).length);
  if (probe.layers[0]?.id !== expected)
    throw new Error('the middle cursor does not resume at the next layer');
  if (!cursor || !smallMiddle.next_cursor) throw new Error('no cursor to the middle');
  const cases: LatencyCase[] = [
    {
      id: 'smallFirst',
      url: `${small.base}?limit=${FIRST_LIMIT}`,
      headers: auth,
      check: pageCheck(small, FIRST_LIMIT),
    },
    {
      id: 'largeFirst',
      url: `${large.base}?limit=${FIRST_LIMIT}`,
      headers: auth,
      check: pageCheck(large, FIRST_LIMIT),
    },
    {
      id: 'smallMiddle',
      url: `${small.base}?limit=${MIDDLE_LIMIT}&cursor=${encodeURIComponent(smallMiddle.next_cursor)}`,
      headers: auth,
      check: pageCheck(small, MIDDLE_LIMIT),
    },
    {
      id: 'largeMiddle',
      url: `${large.base}?limit=${MIDDLE_LIMIT}&cursor=${encodeURIComponent(cursor)}`,
      headers: auth,
      check: pageCheck(large, MIDDLE_LIMIT),
    },
  ];
  // The API's cursor is the LastEvaluatedKey (shared/store/paging.ts); the reference rows start there.
  const middleKey = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
    PK: string;
    SK: string;
  };
  const partition = keys.workspacePartition(large.workspaceId);
  if (middleKey.PK !== partition) throw new Error('the middle cursor names another partition');
  const query = `https://127.0.0.1:${setup.floorPort}/floor-layers?pk=${encodeURIComponent(partition)}&prefix=${encodeURIComponent(keys.layerPrefix(large.serviceId))}&limit=${MIDDLE_LIMIT}`;
  const after = `&after=${encodeURIComponent(middleKey.SK)}`;
  cases.push(
    { id: 'refFirst', url: query, check: pageCheck(large, MIDDLE_LIMIT) },
    { id: 'refMiddle', url: `${query}${after}`, check: pageCheck(large, MIDDLE_LIMIT) },
    { id: 'refSeek', url: `${query}${after}&seek=1`, check: pageCheck(large, MIDDLE_LIMIT) },
  );
  const byCursor = await call(agent, 'GET', `${query}${after}`, {});
  const bySeek = await call(agent, 'GET', `${query}${after}&seek=1`, {});
  if (
    JSON.stringify(byCursor.layers.map((l: { SK: string }) => l.SK)) !==
    JSON.stringify(bySeek.layers.map((l: { SK: string }) => l.SK))
  ) {
    throw new Error('the key-condition seek returned another page than ExclusiveStartKey');
  }
  // The walk every plan did before ADR 0101, then the 409 of a plain deleteService (the plan it carries).
  const recounts = {
    mid: await walkMs(setup.endpoint, setup.mid, setup.midSeed.layers),
    large: await walkMs(setup.endpoint, large, setup.seed.layers),
  };
  for (const t of [setup.mid, large]) {
    const refused = await call(
      agent,
      'DELETE',
      planUrl(setup.url, t).replace(/\/deletion-plan$/, ''),
      auth,
      undefined,
      409,
    );
    planCheck(t === large ? setup.seed.layers : setup.midSeed.layers)(refused.plan);
  }
  progress(
    `scaling: the walk of the plans before ADR 0101: ${fixed(recounts.mid)} ms at ${thousands(setup.midSeed.layers)}, ${fixed(recounts.large)} ms at ${thousands(setup.seed.layers)} layers`,
  );
  cases.push(
    { id: 'planSmall', url: planUrl(setup.url, small), headers: auth, check: planCheck(SMALL) },
    {
      id: 'planMid',
      url: planUrl(setup.url, setup.mid),
      headers: auth,
      check: planCheck(setup.midSeed.layers),
    },
    { id: 'planLarge', url: planUrl(setup.url, large), headers: auth, check: planCheck(setup.seed.layers) },
    { id: 'wsPlanSmall', url: workspacePlanUrl(setup.url, small), headers: auth, check: planCheck(SMALL) },
    {
      id: 'wsPlanLarge',
      url: workspacePlanUrl(setup.url, large),
      headers: auth,
      check: planCheck(setup.seed.layers),
    },
  );
  progress(`scaling: ${plan.warmup} warm-up requests per case`);
  const { results, truncated, budgetMs } = await measureLatency(
    agent,
    cases,
    { warmup: plan.warmup, rounds: plan.rounds, perRound: plan.perRound, budgetMs: plan.budgetMs },
    (s) => progress(`scaling: ${s}`),
  );
  return { setup, recounts, results, truncated, budgetMs, middleIndex };
}

/** The report's scaling section; adds its verdict lines to `verdicts`. */
export function scalingSection(
  o: ScalingOutcome,
  plan: Omit<ScalingPlan, 'budgetMs'>,
  verdicts: string[],
): string {
  const by = new Map(o.results.map((r) => [r.id, r.samples]));
  const samples = (id: string) => by.get(id) ?? [];
  const seeded = o.setup.seed.layers;
  const n = thousands(seeded);
  const describe: Record<string, [string, string]> = {
    smallFirst: [`${SMALL} layers: first page`, `?limit=${FIRST_LIMIT}`],
    largeFirst: [`${n} layers: first page`, `?limit=${FIRST_LIMIT}`],
    smallMiddle: [
      `${SMALL} layers: page from the middle (after layer ${SMALL / 2})`,
      `?limit=${MIDDLE_LIMIT}&cursor=…`,
    ],
    largeMiddle: [
      `${n} layers: page from the middle (after layer ${thousands(o.middleIndex)})`,
      `?limit=${MIDDLE_LIMIT}&cursor=…`,
    ],
    refFirst: [
      `reference: floor with the repository's Query, ${n} layers, first page`,
      `limit=${MIDDLE_LIMIT}`,
    ],
    refMiddle: [
      `reference: the same Query with ExclusiveStartKey after layer ${thousands(o.middleIndex)}`,
      `limit=${MIDDLE_LIMIT}&after=…`,
    ],
    refSeek: [
      `reference: the same page by key condition (SK BETWEEN), no ExclusiveStartKey`,
      `limit=${MIDDLE_LIMIT}&after=…&seek=1`,
    ],
    planSmall: [`${SMALL} layers: deletion plan`, ''],
    planMid: [`${thousands(o.setup.midSeed.layers)} layers: deletion plan`, ''],
    planLarge: [`${n} layers: deletion plan`, ''],
    wsPlanSmall: [`${SMALL} layers: workspace deletion plan`, ''],
    wsPlanLarge: [`${n} layers: workspace deletion plan`, ''],
  };
  const request = (id: string, query: string) =>
    id.startsWith('ref')
      ? `\`GET /floor-layers?${query}\``
      : id.startsWith('plan') || id.startsWith('wsPlan')
        ? '`GET …/deletion-plan`'
        : `\`GET …/layers${query}\``;
  const rows = o.results.map((r) => {
    const [what, query] = describe[r.id] ?? [r.id, ''];
    return [
      what,
      request(r.id, query),
      String(r.samples.length),
      fixed(percentile(r.samples, 50)),
      fixed(percentile(r.samples, 95)),
      fixed(percentile(r.samples, 99)),
      fixed(mean(r.samples)),
    ];
  });
  const pairs: [string, string, string][] = [
    [`first page (limit ${FIRST_LIMIT})`, 'largeFirst', 'smallFirst'],
    [`page from the middle (limit ${MIDDLE_LIMIT})`, 'largeMiddle', 'smallMiddle'],
  ];
  const ratioRows = pairs.map(([what, large, small]) => {
    const p = (id: string, q: number) => percentile(samples(id), q);
    const pass = p(large, 50) <= RATIO_MAX * p(small, 50);
    verdicts.push(
      `- listLayers ${what}, ${n} vs ${SMALL} layers, p50 ratio ≤ ${RATIO_MAX}: ${verdict(pass)} ` +
        `(${ratio(p(large, 50), p(small, 50))}: ${fixed(p(large, 50))} ms vs ${fixed(p(small, 50))} ms)` +
        (o.setup.seed.complete ? '' : ` — only ${n} of ${thousands(LARGE)} layers were seeded in time`),
    );
    return [
      what,
      ratio(p(large, 50), p(small, 50)),
      ratio(p(large, 95), p(small, 95)),
      ratio(p(large, 99), p(small, 99)),
      `p50 ≤ ${RATIO_MAX}×`,
      verdict(pass),
    ];
  });
  const s = o.setup.seed;
  const p50 = (id: string) => percentile(samples(id), 50);
  const planLarge = p50('planLarge');
  const planPass = samples('planLarge').length > 0 && planLarge <= PLAN_P50_MAX_MS;
  verdicts.push(
    `- deletion plan (getServiceDeletionPlan) at ${n} layers, p50 ≤ ${PLAN_P50_MAX_MS} ms: ${verdict(planPass)} ` +
      `(${fixed(planLarge)} ms; ${fixed(p50('planMid'))} ms at ${thousands(o.setup.midSeed.layers)}, ` +
      `${fixed(p50('planSmall'))} ms at ${SMALL}; the walk every plan did before took ` +
      `${fixed(o.recounts.large)} ms at ${n})`,
  );
  const wsPlanLarge = p50('wsPlanLarge');
  const wsPlanPass = samples('wsPlanLarge').length > 0 && wsPlanLarge <= PLAN_P50_MAX_MS;
  verdicts.push(
    `- deletion plan (getWorkspaceDeletionPlan) of a workspace with ${n} layers, p50 ≤ ${PLAN_P50_MAX_MS} ms: ` +
      `${verdict(wsPlanPass)} (${fixed(wsPlanLarge)} ms; ${fixed(p50('wsPlanSmall'))} ms with ${SMALL})`,
  );
  const targeted = new Map([
    ['planLarge', planPass],
    ['wsPlanLarge', wsPlanPass],
  ]);
  const planRows = (
    [
      ['planSmall', 'service', SMALL, undefined],
      ['planMid', 'service', o.setup.midSeed.layers, o.recounts.mid],
      ['planLarge', 'service', seeded, o.recounts.large],
      ['wsPlanSmall', 'workspace', SMALL, undefined],
      ['wsPlanLarge', 'workspace', seeded, undefined],
    ] as const
  ).map(([id, scope, layers, recount]) => {
    const pass = targeted.get(id);
    return [
      scope,
      thousands(layers),
      recount === undefined ? '—' : fixed(recount),
      fixed(p50(id)),
      fixed(percentile(samples(id), 99)),
      pass === undefined ? '' : `p50 ≤ ${PLAN_P50_MAX_MS} ms`,
      pass === undefined ? '' : verdict(pass),
    ];
  });
  const planPart = [
    `**The deletion plan (ADR 0101).** \`GET …/services/{service}/deletion-plan\` (the plan a 409 of deleteService ` +
      'carries, same code) reads the counts from the sharded counters (one Query), the first 100 layers (one Query ' +
      'with Limit) and the dependent groups, side by side. The seeded layers bypass the counters, so the seeding records ' +
      'what it wrote as their base (what the one-time recount of an older service writes). Each seeded service is checked ' +
      'first through the 409 of a plain `DELETE` (same plan). "Walk before" is what every plan did before ADR 0101: the ' +
      "pass over the service's layers with the plan's projection, timed from the bench straight against DynamoDB Local " +
      '(through the host, a first plan that walked 10,000 layers of this 220,000-item table timed out on a busy machine). ' +
      "`GET …/workspaces/{workspace}/deletion-plan` (deleteWorkspace's plan) adds up its services' counters (one Query " +
      'for all of them) and reads its other entities by their key ranges; before, it walked the whole workspace partition ' +
      '(every layer and every public id).',
    '',
    table(
      ['plan of', 'layers', 'walk before (ms)', 'plan p50', 'plan p99', 'target', 'result'],
      planRows,
      '---|---:|---:|---:|---:|---|---',
    ),
    '',
  ].join('\n');
  const emulator =
    samples('refFirst').length && samples('refMiddle').length && samples('refSeek').length
      ? `**Where the middle page's time goes.** The reference rows send the layer repository's first-page Query straight to ` +
        `DynamoDB Local from the bare floor server, then the page after layer ${thousands(o.middleIndex)} two ways: through ` +
        `ExclusiveStartKey over the whole prefix (how the repository resumed a cursor before ADR 0097) it costs ` +
        `${ratio(p50('refMiddle'), p50('refFirst'))} its first page; found by the key condition instead ` +
        `(\`SK BETWEEN <cursor SK> AND <prefix>\\uffff\`) ${ratio(p50('refSeek'), p50('refFirst'))}. DynamoDB Local walks the key ` +
        'range up to an ExclusiveStartKey rather than seeking it, so its cost grows with the offset. Since ADR 0097 the ' +
        "repository seeks: each next page's key condition starts at the cursor's sort key (`SK BETWEEN <cursor SK> AND " +
        "<prefix end>`), with the cursor's key as ExclusiveStartKey only to step over that one item, so the API's middle " +
        'page rows above cost what the key-condition reference costs.\n'
      : '';
  return [
    `## 3. Scaling: a page of listLayers with ${SMALL} vs ${n} layers in the service`,
    '',
    `Its own stack: DynamoDB Local **in memory** (on disk it writes ~350 items/s here) and a second local host ` +
      '(no PostGIS) and a floor server on its table, started beside the bundling (idle during the import-time runs) and filled while the main host initialised its PostGIS; nothing was measured meanwhile. ' +
      `Two workspaces with one disabled PostGIS service each. The ${SMALL} layers were created through the API ` +
      `(draft \`createLayer\`, ${fixed(o.setup.apiCreateMs / 1000, 1)} s); the ${n} were seeded with BatchWriteItem ` +
      "(12 layers = 24 items per request: the layer item and its public id marker, built with the product's key " +
      'builders and entity tags around the `Layer` its own `createLayer` returns for a draft; ' +
      `${SEED_CONCURRENCY} requests in flight): ${thousands(s.items)} items in ` +
      `${thousands(s.requests)} requests, **${fixed(s.ms / 1000, 1)} s** (${thousands(s.items / (s.ms / 1000))} items/s, ` +
      `${thousands(s.retriedItems)} items retried as unprocessed)` +
      (s.complete ? '' : `, **stopped at the seeding budget of ${fixed(plan.seedBudgetMs / 1000, 0)} s**`) +
      '. Before measuring, a seeded layer item and its marker were checked against ones the API created: ' +
      'same attributes, same types, same values except the ones naming the layer. ' +
      `The middle cursors: for ${SMALL} layers the \`next_cursor\` of a first page of ${SMALL / 2}; for ${n}, the cursor the API ` +
      `returns after layer ${thousands(o.middleIndex)} (its LastEvaluatedKey through the product's \`encodeCursor\`), built ` +
      'from the seeded ids in key order and checked to resume at the next layer. ' +
      `The middle pages use limit ${MIDDLE_LIMIT} so that both are full (the ${SMALL}-layer service has ${SMALL / 2} ` +
      `layers after its middle). Same method as section 1: ${plan.warmup} warm-up requests per case, up to ` +
      `${plan.rounds} rounds × ${plan.perRound} per case, order rotating; API key; in ms. ` +
      `Startup: DynamoDB Local ${fixed(o.setup.dynamoStartMs / 1000, 1)} s, host ${fixed(o.setup.hostStartMs / 1000, 1)} s.`,
    '',
    table(['case', 'request', 'n', 'p50', 'p95', 'p99', 'mean'], rows, '---|---|---:|---:|---:|---:|---:'),
    '',
    table(
      ['page', `p50 ${n} / ${SMALL}`, 'p95 ratio', 'p99 ratio', 'target', 'result'],
      ratioRows,
      '---|---:|---:|---:|---|---',
    ),
    '',
    emulator,
    planPart,
    ...(o.truncated
      ? [`Stopped early at the time budget (${fixed(o.budgetMs / 1000, 0)} s of measured rounds).\n`]
      : []),
  ].join('\n');
}
