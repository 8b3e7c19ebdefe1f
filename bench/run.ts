/**
 * `npm run bench`: a report, not a test (DESIGN §10, ADR 0020). Measures
 *   1. request latency of workspace, service and layer reads and of createLayer (draft and
 *      validated against the embedded PostGIS) against the local host, next to THE FLOOR (a bare
 *      HTTPS server doing one DynamoDB Local GetItem) and reference rows on it measured in the same
 *      run: each list's own floor is the authorizer's read for an API key THEN that list's Query
 *      (bench/list-floors.ts, ADR 0140). Its margin targets (getWorkspace vs the floor, JWT vs API
 *      key, each list vs its floor) are measured PAIRED (A and B interleaved over the same agent,
 *      many rounds, one ratio per round) and judged on the spread of those ratios (bench/paired.ts);
 *      a phase profile of the lists (bench/list-phases.ts) says where their time goes;
 *   2. minified bundle size and import time of every Lambda, next to the FLOOR handler;
 *   3. the scaling run: a listLayers page with 100 vs 100,000 layers in the service (ADR 0021);
 *   4. recursive deleteService of 1,000 and 10,000 layers: time and DynamoDB write units (on the
 *      scaling stack; `npx tsx bench/deletion.ts` runs this section alone);
 *   5. the importer vs GDAL's ogr2ogr into a real PostGIS (and ours into the embedded one; loads
 *      resumed over 20 runs vs one), run last on its own (bench/imports.ts;
 *      `npx tsx bench/imports.ts` runs this section alone).
 * Prints markdown (also written to bench/results.md), marks each target PASS/FAIL, and exits 0
 * whenever the measurement itself succeeded. Everything it starts is stopped, also on errors.
 * `BENCH_ONLY=scaling npm run bench` runs section 3 alone (its own stack, ~4 minutes) and writes
 * its report to `.bench/results-scaling.md` instead, so bench/results.md keeps the full run.
 * `BENCH_ONLY=latency` runs section 1 alone (DynamoDB Local, the host with its PostGIS, the floor;
 * 4–6 minutes on the busy 2-core machine, half of it the host's start and data) into
 * `.bench/results-latency.md`.
 * `BENCH_ONLY=usage-keys` measures the usage-key assignment of ADR 0111 alone (`.bench/results-usage-keys.md`).
 * `BENCH_ONLY=bundles` runs section 2 alone (bundle sizes, import times, the cold paths of the
 * lazily loaded routes) into `.bench/results-bundles.md`.
 * `BENCH_ONLY=cold` runs section 2's cold requests alone (the bundles built, DynamoDB Local and the
 * host with its PostGIS started; every route and the authorizer, bench/cold-requests.ts) into
 * `.bench/results-cold.md`; `BENCH_COLD_RUNS` sets its runs per route (default 5).
 * Section 8, the data plane (bench/data-plane.ts: the workspace's OGC API vs its SQL, on the main
 * stack after section 1), runs alone with `npm run bench -- data-plane` (or `BENCH_ONLY=data-plane`)
 * into `.bench/results-data-plane.md`. Every section that runs alone is named either way.
 * Section 9, the embedded PostGIS's time to a first good answer after a runaway (bench/recovery.ts,
 * ADR 0142), runs on the main stack after section 8; alone with `npx tsx bench/recovery.ts`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { version as esbuildVersion } from 'esbuild';
import { type DynamoLocal, startDynamoLocal } from '../infra/local/dynamodb.ts';
import { localIssuer } from '../infra/local/files.ts';
import { routes } from '../shared/api/routes.ts';
import { ROLES_CLAIM } from '../shared/auth/authenticate.ts';
import { hashApiKey } from '../shared/domain/api-keys.ts';
import { keys } from '../shared/store/keys.ts';
import { type HostProcess, startHostProcess } from '../test/support/host-process.ts';
import { freePort } from '../test/support/ports.ts';
import {
  type Bundle,
  type BundleTarget,
  buildBundles,
  type ColdPath,
  coldPathsOf,
  folderOf,
  grouped,
  growthOverFloor,
  measureColdPaths,
  measureImports,
  metafileSection,
  packageOf,
  root,
  sidecarSection,
} from './bundles.ts';
import { cleanup, installExitHandlers, onCleanup, stopNow, stopStarting, wasInterrupted } from './cleanup.ts';
import { COLD_REQUESTS_WATCHDOG_MS, coldRequestSection, measureColdRequests } from './cold-requests.ts';
import {
  concurrencyAlone,
  concurrencySection,
  concurrencyTarget,
  measureConcurrency,
} from './concurrency.ts';
import { consoleSection, measureConsole } from './console.ts';
import {
  type DataPlaneOutcome,
  type DataPlaneTarget,
  dataPlaneSection,
  measureDataPlane,
} from './data-plane.ts';
import { deletionSection, measureDeletion } from './deletion.ts';
import { startFloorServer, stopChild } from './floor-process.ts';
import { IMPORTS_WATCHDOG_MS, importsSection, measureImportLoads } from './imports.ts';
import { call, type LatencyCase, type LatencyResult, measureLatency } from './latency.ts';
import { type ListFloor, listFloorParams } from './list-floors.ts';
import { listPhasesSection, measureListPhases } from './list-phases.ts';
import type { PhaseCaseResult, PhaseInput } from './list-phases-child.ts';
import {
  measurePairs,
  type Pair,
  type PairPlan,
  type PairResult,
  pairedOutcome,
  pairedSection,
} from './paired.ts';
import { CLEANUP_PREFIX, fillScaling, measureScaling, scalingSection, startScalingStack } from './scaling.ts';
import { fixed, kb, mean, median, percentile, ratio, table, thousands, verdict } from './stats.ts';
import { measureUsageKeys, usageKeysSection } from './usage-keys.ts';

// ---- plan (bounded in count and in time) --------------------------------------------------------
const WORKSPACES = 100;
const LIST_LIMIT = 50;
const LAYER_LIST_LIMIT = 100;
/** Services in the demo workspace for listServices: demo-postgis and 9 more. */
const SERVICES = 10;
const WARMUP = 30;
const ROUNDS = 10;
const PER_ROUND = 50; // ROUNDS × PER_ROUND = 500 measured requests per case at most (1000 before 0021)
/** Validated creates run against PGlite (one backend): fewer, 10 rounds × 20 = 200 at most. */
const VALIDATED_WARMUP = 10;
const VALIDATED_PER_ROUND = 20;
const LATENCY_BUDGET_MS = 75_000;
/** Section 1 alone (`BENCH_ONLY=latency`): a shorter unpaired block, the paired rounds as in the full run. */
const ALONE_LATENCY_BUDGET_MS = 40_000;
/** The paired verdicts (ADR 0140): up to 30 rounds of 20 + 20 interleaved requests per target, at least 20. */
const PAIRED: PairPlan = { rounds: 30, perSide: 20, budgetMs: 60_000, minRounds: 20 };
/** The lists' phase profile: in-process requests per list after its warm-up. */
const PHASES = { warmup: 30, requests: 150 };
const SCALING = { seedBudgetMs: 150_000, warmup: 10, rounds: 10, perRound: 20 };
const SCALING_BUDGET_MS = 60_000;
/** The whole run aims to end by then (section 4 adds ~90 s): on a busy machine the measured rounds shrink to their minimum (25 s and 40 s). */
const RUN_TARGET_MS = 440_000;
const IMPORT_RUNS = 5;
/** Fresh processes per cold request case (import plus the first request, section 2). */
const COLD_REQUEST_RUNS = 5;
const IMPORT_BUDGET_MS = 45_000;
const WATCHDOG_MS = 10 * 60_000;

// ---- targets ------------------------------------------------------------------------------------
const READ_P50_MAX = 1.5;
/** Issue #15's read after authentication (ADR 0099): getWorkspace against the two-GetItem reference. */
const FOLDED_READ_MAX = 1.2;
const JWT_OVER_APIKEY_MAX = 1.1;
/** Issue #27: each list against its architecture's floor, the authorizer's read then its Query (ADR 0140). */
const LIST_OVER_FLOOR_MAX = 1.15;
const BUNDLE_SIZE_MAX = 1.25;
const IMPORT_TIME_MAX = 1.25;

const FLOOR_NAME = 'floor/floor-handler';
/** The bundles whose metafile section 2 shows against the floor's: a typical read and a typical change. */
const TYPICAL_READ = 'workspaces/get-workspace';
const TYPICAL_CHANGE = 'workspaces/update-workspace';
const AUTHORIZER_ENTRY = 'functions/authorizer/index.ts';
const bundleDir = join(root, '.bench', 'bundles');
const resultsFile = join(root, 'bench', 'results.md');

// The SDK's notice about Node 22 would interrupt the progress lines (the versions are pinned).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const startedAt = Date.now();
const loadAtStart = loadavg();
const progress = (s: string) =>
  process.stderr.write(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${s}\n`);

// ---- part 2 helpers -----------------------------------------------------------------------------
function bundleTargets(): BundleTarget[] {
  const byHandler = new Map<string, string[]>();
  for (const op of routes) byHandler.set(op.handler, [...(byHandler.get(op.handler) ?? []), op.operationId]);
  const name = (entry: string) => entry.replace(/^functions\//, '').replace(/\.ts$/, '');
  return [
    { name: FLOOR_NAME, label: 'FLOOR (one GetItem)', entry: 'bench/floor-handler.ts' },
    { name: name(AUTHORIZER_ENTRY), label: 'authorizer', entry: AUTHORIZER_ENTRY },
    ...[...byHandler].map(([entry, ids]) => ({ name: name(entry), label: ids.join(', '), entry })),
  ];
}

// ---- part 1 helpers -----------------------------------------------------------------------------
function expect(condition: unknown, message: string): void {
  if (!condition) throw new Error(message);
}

interface LatencyOutcome {
  results: LatencyResult[];
  truncated: boolean;
  budgetMs: number;
  paired: { results: PairResult[]; rounds: number; truncated: boolean };
  phases: PhaseCaseResult[] | Error;
  workspaceCount: number;
  serviceCount: number;
  dynamoStartMs: number;
  hostStartMs: number;
}

/** The main stack: DynamoDB Local on disk, the local host with its embedded PostGIS, the floor server. */
interface MainStack {
  dataDir: string;
  host: HostProcess;
  floorPort: number;
  agent: Agent;
  auth: Record<string, string>;
  postgis: { host: string; port: number; database: string; user: string; password: string };
  dynamoStartMs: number;
  hostStartMs: number;
}

interface MainDynamo {
  dataDir: string;
  dynamo: DynamoLocal;
  dynamoStartMs: number;
}

/** The main stack's DynamoDB Local (on disk, in a temp data dir); idle once started. */
async function startMainDynamo(): Promise<MainDynamo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-'));
  onCleanup('data dir', () => rmSync(dataDir, { recursive: true, force: true }));
  const t = Date.now();
  const dynamoPromise = freePort().then((port) => startDynamoLocal(port, join(dataDir, 'dynamodb')));
  onCleanup('DynamoDB Local', stopStarting(dynamoPromise, join(dataDir, 'dynamodb')));
  const dynamo: DynamoLocal = await dynamoPromise;
  return { dataDir, dynamo, dynamoStartMs: Date.now() - t };
}

async function startMainStack({ dataDir, dynamo, dynamoStartMs }: MainDynamo): Promise<MainStack> {
  progress('starting the local host with its embedded PostGIS (first init: ~20–40 s)');
  const t = Date.now();
  const hostPromise = freePort().then((postgisPort) =>
    startHostProcess({
      GEOPLANE_DATA_DIR: dataDir,
      GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
      GEOPLANE_POSTGIS: 'on',
      GEOPLANE_POSTGIS_PORT: String(postgisPort),
      // The benchmark sends far more than the default 50 rps of one usage key: no 429s wanted here.
      GEOPLANE_RATE_LIMIT_RPS: '1000000',
      GEOPLANE_RATE_LIMIT_BURST: '1000000',
    }),
  );
  // Stopping the host stops its PostGIS worker thread with it (same process).
  onCleanup('local host', stopStarting(hostPromise, `GEOPLANE_DATA_DIR=${dataDir}\u0000`));
  const host: HostProcess = await hostPromise;
  const hostStartMs = Date.now() - t;
  progress(`local host ready in ${fixed(hostStartMs / 1000, 1)} s`);
  expect(host.apiKey, `the local host wrote no bootstrap key in ${dataDir}`);
  const saved = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8'));
  expect(saved.postgis?.port, 'bootstrap.json names no embedded PostGIS');

  const floor = startFloorServer(dataDir, dynamo.endpoint);
  onCleanup('floor server', () => stopChild(floor.child));
  const floorPort = await floor.ready;

  // One keep-alive client for everything; it trusts the host's self-signed certificate and nothing else.
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(dataDir, 'tls-cert.pem')),
  });
  onCleanup('HTTPS client', () => agent.destroy());
  const auth = { 'X-API-Key': host.apiKey as string };
  return { dataDir, host, floorPort, agent, auth, postgis: saved.postgis, dynamoStartMs, hostStartMs };
}

/** Data of section 1 (workspaces, services, layers) and its cases. */
async function prepareLatency(m: MainStack): Promise<{
  cases: LatencyCase[];
  /** The lists and their floors (ADR 0140), for the phase profile. */
  lists: { id: string; floor: ListFloor }[];
  workspaceCount: number;
  serviceCount: number;
  demo: string;
  serviceId: string;
}> {
  const { agent, auth, host, floorPort } = m;
  progress(`creating ${WORKSPACES} workspaces`);
  const ids: string[] = [];
  for (let i = 0; i < WORKSPACES; i++) {
    const name = `bench-${String(i).padStart(3, '0')}`;
    ids.push((await call(agent, 'POST', `${host.url}/workspaces`, auth, { name })).id);
  }
  const listed = await call(agent, 'GET', `${host.url}/workspaces?limit=1000`, auth);
  const workspaceCount = (listed.workspaces as unknown[]).length;
  const id = ids[Math.floor(ids.length / 2)] as string;

  // The demo workspace and its demo-postgis service (the embedded PostGIS), addressed by id.
  const demo = (await call(agent, 'GET', `${host.url}/workspaces/demo`, auth)).id as string;
  const services = `${host.url}/workspaces/${demo}/services`;
  const demoService = (
    (await call(agent, 'GET', services, auth)).services as { id: string; name: string }[]
  ).find((x) => x.name === 'demo-postgis');
  if (!demoService) throw new Error('the demo workspace has no demo-postgis service');
  progress(`creating ${SERVICES - 1} more services and ${LAYER_LIST_LIMIT} layers in demo-postgis`);
  for (let i = 1; i < SERVICES; i++) {
    // Disabled: stored without connecting (same item shape as an enabled one).
    await call(agent, 'POST', services, auth, {
      name: `bench-svc-${i}`,
      type: 'postgis',
      connection: m.postgis,
      enabled: false,
    });
  }
  const layers = `${services}/${demoService.id}/layers`;
  for (let i = 0; i < LAYER_LIST_LIMIT; i++) {
    await call(agent, 'POST', layers, auth, {
      source_layer: 'places',
      public_id: `bench-list-${String(i).padStart(3, '0')}`,
      enabled: false,
    });
  }
  const serviceCount = (await call(agent, 'GET', services, auth)).services.length as number;

  // A workspace viewer's token from the local issuer: the read path without the API-key lookup.
  const issuer = await localIssuer(m.dataDir);
  const token = await issuer.sign({ [ROLES_CLAIM]: { [id]: 'viewer' } }, 'bench-viewer', 3600);
  const bearer = { Authorization: `Bearer ${token}` };
  // A viewer by a workspace claim mapping (the usual way: role claims are untrusted by default),
  // resolved from the workspace's mapping summary in the authorizer's read (ADR 0103).
  await call(agent, 'POST', `${host.url}/workspaces/${id}/claim-mappings`, auth, {
    claim_name: 'groups',
    claim_value: 'bench-viewers',
    role_id: 'viewer',
  });
  const mappedToken = await issuer.sign({ groups: ['bench-viewers'] }, 'bench-mapped-viewer', 3600);
  const mapped = { Authorization: `Bearer ${mappedToken}` };
  const sameId = (body: unknown) => expect((body as { id?: string }).id === id, `expected workspace ${id}`);
  const count = (key: string, n: number) => (body: unknown) => {
    const got = (body as Record<string, unknown[] | undefined>)[key]?.length;
    expect(got === n, `expected ${n} ${key}, got ${got}`);
  };
  let created = 0;
  const layer = (enabled: boolean) => () =>
    JSON.stringify({
      source_layer: 'places',
      public_id: `bench-${enabled ? 'v' : 'd'}-${String(++created).padStart(5, '0')}`,
      enabled,
    });
  const isLayer = (enabled: boolean) => (body: unknown) => {
    const l = body as { enabled?: boolean; geometry_type?: string };
    expect(l.enabled === enabled, `expected a layer with enabled ${enabled}`);
    if (enabled) expect(l.geometry_type, 'a validated layer without geometry_type');
  };
  // Each list's floor (ADR 0140): what the authorizer reads for this API key on its path, then its Query.
  const keyHash = hashApiKey(host.apiKey as string);
  const lists: { id: string; floor: ListFloor }[] = [
    { id: 'listWorkspaces', floor: { list: 'workspaces', keyHash, limit: LIST_LIMIT } },
    // listServices' page size is its default, 1000 (the bench sends no limit).
    { id: 'listServices', floor: { list: 'services', keyHash, workspace: demo, limit: 1000 } },
    {
      id: 'listLayers',
      floor: { list: 'layers', keyHash, workspace: demo, service: demoService.id, limit: LAYER_LIST_LIMIT },
    },
  ];
  const floorOf = (list: string) =>
    `https://127.0.0.1:${floorPort}/floor-auth-list?${listFloorParams(
      (lists.find((l) => l.id === list) as { floor: ListFloor }).floor,
    )}`;
  const cases: LatencyCase[] = [
    { id: 'floor', url: `https://127.0.0.1:${floorPort}/floor/${id}`, check: sameId },
    { id: 'getWorkspace', url: `${host.url}/workspaces/${id}`, headers: auth, check: sameId },
    { id: 'getWorkspaceJwt', url: `${host.url}/workspaces/${id}`, headers: bearer, check: sameId },
    { id: 'getWorkspaceMapped', url: `${host.url}/workspaces/${id}`, headers: mapped, check: sameId },
    {
      id: 'listWorkspaces',
      url: `${host.url}/workspaces?limit=${LIST_LIMIT}`,
      headers: auth,
      check: count('workspaces', LIST_LIMIT),
    },
    { id: 'listServices', url: services, headers: auth, check: count('services', serviceCount) },
    {
      id: 'listLayers',
      url: `${layers}?limit=${LAYER_LIST_LIMIT}`,
      headers: auth,
      check: count('layers', LAYER_LIST_LIMIT),
    },
    {
      id: 'createLayerDraft',
      method: 'POST',
      url: layers,
      headers: auth,
      body: layer(false),
      status: 201,
      check: isLayer(false),
    },
    {
      id: 'createLayerValidated',
      method: 'POST',
      url: layers,
      headers: auth,
      body: layer(true),
      status: 201,
      warmup: VALIDATED_WARMUP,
      perRound: VALIDATED_PER_ROUND,
      check: isLayer(true),
    },
    { id: 'floor2', url: `https://127.0.0.1:${floorPort}/floor/${id}?gets=2`, check: sameId },
    {
      id: 'floorBatch',
      url: `https://127.0.0.1:${floorPort}/floor-batch?ids=${id},${ids[0]}`,
      check: sameId,
    },
    {
      id: 'floorServices',
      url:
        `https://127.0.0.1:${floorPort}/floor-layers?pk=${encodeURIComponent(keys.workspacePartition(demo))}` +
        `&prefix=${encodeURIComponent(keys.servicePrefix)}&limit=1000`,
      check: count('layers', serviceCount),
    },
    {
      id: 'floorList',
      url: `https://127.0.0.1:${floorPort}/floor-list?limit=${LIST_LIMIT}`,
      check: count('workspaces', LIST_LIMIT),
    },
    {
      id: 'floorLayers',
      url:
        `https://127.0.0.1:${floorPort}/floor-layers?pk=${encodeURIComponent(keys.workspacePartition(demo))}` +
        `&prefix=${encodeURIComponent(keys.layerPrefix(demoService.id))}&limit=${LAYER_LIST_LIMIT}`,
      check: count('layers', LAYER_LIST_LIMIT),
    },
    { id: 'floorAuthWorkspaces', url: floorOf('listWorkspaces'), check: count('workspaces', LIST_LIMIT) },
    { id: 'floorAuthServices', url: floorOf('listServices'), check: count('services', serviceCount) },
    { id: 'floorAuthLayers', url: floorOf('listLayers'), check: count('layers', LAYER_LIST_LIMIT) },
  ];
  return { cases, lists, workspaceCount, serviceCount, demo, serviceId: demoService.id };
}

/** The margin targets of section 1, each measured paired (ADR 0140): A, B and A / B at most. */
function pairsOf(cases: readonly LatencyCase[]): Pair[] {
  const c = (id: string) => {
    const found = cases.find((x) => x.id === id);
    if (!found) throw new Error(`no latency case '${id}'`);
    return found;
  };
  const list = (id: string, floor: string, what: string): Pair => ({
    id,
    what,
    a: c(id),
    b: c(floor),
    max: LIST_OVER_FLOOR_MAX,
  });
  return [
    {
      id: 'getWorkspace',
      what: `getWorkspace (API key) p50 ≤ ${READ_P50_MAX}× floor`,
      a: c('getWorkspace'),
      b: c('floor'),
      max: READ_P50_MAX,
    },
    {
      id: 'getWorkspaceJwt',
      what: `getWorkspace (viewer JWT) p50 ≤ ${JWT_OVER_APIKEY_MAX}× getWorkspace by API key`,
      a: c('getWorkspaceJwt'),
      b: c('getWorkspace'),
      max: JWT_OVER_APIKEY_MAX,
    },
    {
      id: 'getWorkspaceMapped',
      what: `getWorkspace (JWT, viewer by a workspace claim mapping) p50 ≤ ${JWT_OVER_APIKEY_MAX}× getWorkspace by API key`,
      a: c('getWorkspaceMapped'),
      b: c('getWorkspace'),
      max: JWT_OVER_APIKEY_MAX,
    },
    list(
      'listWorkspaces',
      'floorAuthWorkspaces',
      `listWorkspaces (limit ${LIST_LIMIT}) p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer GetItem, then its Query)`,
    ),
    list(
      'listServices',
      'floorAuthServices',
      `listServices p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer BatchGetItem, then its Query)`,
    ),
    list(
      'listLayers',
      'floorAuthLayers',
      `listLayers (limit ${LAYER_LIST_LIMIT}) p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer BatchGetItem, then its Query)`,
    ),
  ];
}

/** Section 1's measurement: the unpaired block, the paired rounds, then the lists' phase profile. */
async function measureSection1(
  m: MainStack,
  dynamoEndpoint: string,
  prepared: Awaited<ReturnType<typeof prepareLatency>>,
  budgetMs: () => number,
): Promise<LatencyOutcome> {
  progress(`latency: ${WARMUP} warm-up requests per case`);
  const measured = await measureLatency(
    m.agent,
    prepared.cases,
    { warmup: WARMUP, rounds: ROUNDS, perRound: PER_ROUND, budgetMs },
    progress,
  );
  const paired = await measurePairs(m.agent, pairsOf(prepared.cases), PAIRED, progress);
  const phaseInput: PhaseInput = {
    dataDir: m.dataDir,
    endpoint: dynamoEndpoint,
    table: 'geoplane',
    apiKey: m.host.apiKey as string,
    ...PHASES,
    cases: prepared.lists.map((l) => {
      const url = new URL((prepared.cases.find((c) => c.id === l.id) as LatencyCase).url);
      return { id: l.id, path: url.pathname + url.search, floor: l.floor };
    }),
  };
  const phases = await measureListPhases(phaseInput, progress);
  return {
    ...measured,
    paired,
    phases,
    workspaceCount: prepared.workspaceCount,
    serviceCount: prepared.serviceCount,
    dynamoStartMs: m.dynamoStartMs,
    hostStartMs: m.hostStartMs,
  };
}

/** What is left of the run's time target for section 1's measured rounds (they start after the warm-up). */
function latencyBudget(): number {
  const left = RUN_TARGET_MS - (Date.now() - startedAt) - 10_000;
  return Math.max(40_000, Math.min(LATENCY_BUDGET_MS, left));
}

/** The same for the scaling run's rounds, which come first and leave section 1 its share. */
function scalingBudget(): number {
  // Section 1's warm-up (~15–25 s) and its rounds come after: the scaling rounds get 40 % of the rest.
  const left = RUN_TARGET_MS - (Date.now() - startedAt) - 35_000;
  return Math.max(25_000, Math.min(SCALING_BUDGET_MS, 0.4 * left));
}

// ---- the report ---------------------------------------------------------------------------------
function gitDescription(): string {
  // For runs outside a git checkout (an exported tree), the caller may name the commit.
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const sha = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no');
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'not a git checkout';
  }
}

interface Verdicts {
  lines: string[];
}

function latencySection(outcome: LatencyOutcome, verdicts: Verdicts): string {
  const by = new Map(outcome.results.map((r) => [r.id, r]));
  const floor = by.get('floor') as LatencyResult;
  const f = {
    p50: percentile(floor.samples, 50),
    p95: percentile(floor.samples, 95),
    p99: percentile(floor.samples, 99),
  };
  const rows: string[][] = [];
  const describe: Record<string, [string, string]> = {
    floor: ['**FLOOR**: bare HTTPS server, 1 GetItem', 'GET /floor/{id}'],
    getWorkspace: ['getWorkspace (by id, API key)', 'GET /api/v1/workspaces/{id}'],
    getWorkspaceJwt: ['getWorkspace (by id, viewer JWT)', 'GET /api/v1/workspaces/{id}'],
    getWorkspaceMapped: [
      'getWorkspace (by id, JWT, viewer by a workspace claim mapping)',
      'GET /api/v1/workspaces/{id}',
    ],
    listWorkspaces: [
      `listWorkspaces (limit ${LIST_LIMIT}, API key)`,
      `GET /api/v1/workspaces?limit=${LIST_LIMIT}`,
    ],
    listServices: [
      `listServices (${outcome.serviceCount} services, API key)`,
      'GET /api/v1/workspaces/{id}/services',
    ],
    listLayers: [
      `listLayers (limit ${LAYER_LIST_LIMIT}, API key)`,
      `GET /api/v1/workspaces/{id}/services/{id}/layers?limit=${LAYER_LIST_LIMIT}`,
    ],
    createLayerDraft: [
      'createLayer, draft (`enabled: false`, API key)',
      'POST /api/v1/workspaces/{id}/services/{id}/layers',
    ],
    createLayerValidated: [
      'createLayer, validated against PostGIS (`enabled: true`)',
      'POST /api/v1/workspaces/{id}/services/{id}/layers',
    ],
    floor2: ['reference: floor with 2 GetItems', 'GET /floor/{id}?gets=2'],
    floorBatch: ['reference: floor doing one BatchGetItem of 2 items', 'GET /floor-batch?ids={id},{id}'],
    floorServices: ["reference: floor with listServices' Query", 'GET /floor-layers?prefix=SERVICE%23'],
    floorList: [
      `reference: floor with listWorkspaces' Query (limit ${LIST_LIMIT})`,
      `GET /floor-list?limit=${LIST_LIMIT}`,
    ],
    floorLayers: [
      `reference: floor with listLayers' Query (limit ${LAYER_LIST_LIMIT})`,
      `GET /floor-layers?limit=${LAYER_LIST_LIMIT}`,
    ],
    floorAuthWorkspaces: [
      `**listWorkspaces' floor**: the authorizer's GetItem, then its Query (limit ${LIST_LIMIT})`,
      `GET /floor-auth-list?list=workspaces&limit=${LIST_LIMIT}`,
    ],
    floorAuthServices: [
      "**listServices' floor**: the authorizer's BatchGetItem (3 keys), then its Query",
      'GET /floor-auth-list?list=services&limit=1000',
    ],
    floorAuthLayers: [
      `**listLayers' floor**: the authorizer's BatchGetItem (5 keys), then its Query (limit ${LAYER_LIST_LIMIT})`,
      `GET /floor-auth-list?list=layers&limit=${LAYER_LIST_LIMIT}`,
    ],
  };
  // Every target is a paired verdict (ADR 0140); the table shows which, and the paired result.
  const pairedBy = new Map(outcome.paired.results.map((r) => [r.pair.id, r]));
  const paired = pairedSection(outcome.paired, PAIRED, verdicts.lines);
  const targetOf: Record<string, string> = {
    getWorkspace: `≤ ${READ_P50_MAX}× floor`,
    getWorkspaceJwt: `≤ ${JWT_OVER_APIKEY_MAX}× API key`,
    getWorkspaceMapped: `≤ ${JWT_OVER_APIKEY_MAX}× API key`,
    listWorkspaces: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
    listServices: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
    listLayers: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
  };
  const resultOf = (id: string) => {
    const r = pairedBy.get(id);
    if (!r) return '—';
    const result = pairedOutcome(r.ratios, r.pair.max);
    return result === 'straddles' ? '**FAIL** (no verdict)' : verdict(result === 'pass');
  };
  for (const r of outcome.results) {
    const p50 = percentile(r.samples, 50);
    const p95 = percentile(r.samples, 95);
    const p99 = percentile(r.samples, 99);
    const [what, request] = describe[r.id] ?? [r.id, ''];
    rows.push([
      what,
      `\`${request}\``,
      String(r.samples.length),
      fixed(p50),
      fixed(p95),
      fixed(p99),
      fixed(mean(r.samples)),
      r.id === 'floor' ? '1.00×' : ratio(p50, f.p50),
      r.id === 'floor' ? '1.00×' : ratio(p95, f.p95),
      r.id === 'floor' ? '1.00×' : ratio(p99, f.p99),
      targetOf[r.id] ? `${targetOf[r.id]}, paired` : '—',
      resultOf(r.id),
    ]);
  }
  // The round-trip targets of issue #15 (ADR 0099), each against the reference of its own shape.
  const p50Of = (id: string) => {
    const r = by.get(id);
    return r ? percentile(r.samples, 50) : Number.NaN;
  };
  const against = (what: string, id: string, max: number, ref: string, refName: string) => {
    const pass = p50Of(id) <= max * p50Of(ref);
    verdicts.lines.push(
      `- ${what} p50 ≤ ${max}× ${refName}: ${verdict(pass)} (${ratio(p50Of(id), p50Of(ref))}: ${fixed(p50Of(id))} ms vs ${fixed(p50Of(ref))} ms)`,
    );
  };
  against('getWorkspace (API key)', 'getWorkspace', FOLDED_READ_MAX, 'floor2', 'floor with 2 GetItems');
  // Where the lists' time goes, against their paired p50s over HTTPS.
  const https = new Map(
    ['listWorkspaces', 'listServices', 'listLayers'].flatMap((id) => {
      const r = pairedBy.get(id);
      return r ? [[id, { host: median(r.a), floor: median(r.b), max: r.pair.max }] as const] : [];
    }),
  );
  const phases = listPhasesSection(outcome.phases, https, (id) => describe[id]?.[0] ?? id);
  const reconnects = outcome.results.filter((r) => r.reconnects > 0);
  return [
    '## 1. Request latency: local host vs the floor',
    '',
    `Sequential requests over one keep-alive HTTPS connection per server (node:https Agent, the host's self-signed certificate as \`ca\`), ` +
      `${WARMUP} warm-up requests per case, then up to ${ROUNDS} rounds × ${PER_ROUND} requests per case with the case order rotating per round ` +
      `(validated creates: ${VALIDATED_WARMUP} warm-up, ${ROUNDS} × ${VALIDATED_PER_ROUND}, since PGlite serves one backend). ` +
      `Time from the request call to the last byte of the answer, in ms; percentiles are nearest-rank. ` +
      `The host runs \`infra/local/main.ts\` (API Gateway emulation, the REQUEST authorizer with its API-key read — a GetItem of the credential, ` +
      "or with a workspace in the path one BatchGetItem of the credential and the path's workspace and service (ADR 0099) — then the handler) " +
      `with the rate limit lifted; the floor and the host use the same DynamoDB Local (on disk) and table, ` +
      `reading the same workspace item with ConsistentRead. ${outcome.workspaceCount} workspaces exist. ` +
      'Service and layer cases use the demo workspace and its `demo-postgis` service (the embedded PostGIS, PGlite ' +
      `in a worker thread of the host): ${outcome.serviceCount} services, ${LAYER_LIST_LIMIT} draft layers before the run, ` +
      'and every measured create adds one (unique `public_id`, `source_layer: places`). ' +
      'Writes have no target; their ratios to the one-GetItem floor are for orientation only. ' +
      "**Each list's floor** (ADR 0140) is the floor server doing what the authorizer reads for the same API key on the list's path " +
      '(a consistent GetItem of the credential for listWorkspaces; one consistent BatchGetItem of the credential, the workspace by id ' +
      "and by name marker, and for listLayers the service by id and by name marker) THEN the list's own Query (same key condition, " +
      'filter, Limit, no projection, eventually consistent), as `bench/list-floors.ts` builds both; the phase profile below checks ' +
      "that the host sends exactly these two requests. The older references (a list's Query alone, two GetItems, one BatchGetItem) " +
      'stay for orientation. **Targets are judged on the paired rounds below**, not on this table: its blocks run at different moments.',
    '',
    table(
      [
        'case',
        'request',
        'n',
        'p50',
        'p95',
        'p99',
        'mean',
        'p50 × floor',
        'p95 × floor',
        'p99 × floor',
        'target',
        'result',
      ],
      rows,
      '---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---',
    ),
    '',
    ...(outcome.truncated
      ? [
          `Stopped early at the time budget (${fixed(outcome.budgetMs / 1000, 0)} s of measured rounds): fewer samples than planned.\n`,
        ]
      : []),
    reconnects.length
      ? `New connections during measurement (server closed an idle keep-alive socket): ${reconnects.map((r) => `${r.id} ${r.reconnects}`).join(', ')}.\n`
      : 'No request during measurement had to open a new connection.\n',
    `Startup (not measured above): DynamoDB Local ${fixed(outcome.dynamoStartMs / 1000, 1)} s (beside the bundling), local host with the embedded PostGIS (first init, ` +
      `while the scaling stack of section 3 was seeded beside it) ${fixed(outcome.hostStartMs / 1000, 1)} s.`,
    '',
    paired,
    '',
    phases,
  ].join('\n');
}

/** Import time plus the lazy load of the routes whose heavy part sits beside their bundle (ADR 0100). */
async function measureLazyPaths(bundles: Bundle[], runs: number): Promise<ColdPath[]> {
  const paths = coldPathsOf(
    bundles,
    bundles.find((b) => b.name === TYPICAL_READ),
  );
  progress(`cold paths: ${paths.length} lazily loaded paths, ${runs} runs`);
  await measureColdPaths(paths, runs);
  return paths;
}

function bundleSection(
  bundles: Bundle[],
  importRuns: number,
  // No bundle target any more (issue #27); the parameter stays for the callers' shape.
  _verdicts: Verdicts,
  coldPaths: ColdPath[] = [],
): string {
  const floor = bundles.find((b) => b.name === FLOOR_NAME) as Bundle;
  const floorImport = median(floor.importMs);
  const floorCpu = median(floor.importCpuMs);
  const rows: string[][] = [];
  const lambdas = bundles.filter((b) => b !== floor);
  for (const b of bundles) {
    const isFloor = b === floor;
    if (b.buildError) {
      rows.push([`\`${b.name}\``, b.label, 'BUILD ERROR', '', '', '', '', '', '', '**ERROR**', '**ERROR**']);
      continue;
    }
    const ms = median(b.importMs);
    const sizeOk = b.bytes <= BUNDLE_SIZE_MAX * floor.bytes;
    const importOk = !b.importError && ms <= IMPORT_TIME_MAX * floorImport;
    const spread = b.importMs.length
      ? `${fixed(Math.min(...b.importMs), 0)}–${fixed(Math.max(...b.importMs), 0)}`
      : '';
    rows.push([
      isFloor ? `**${b.name}**` : `\`${b.name}\``,
      b.label,
      thousands(b.bytes),
      kb(b.bytes),
      isFloor ? '1.00×' : ratio(b.bytes, floor.bytes),
      b.importError ? 'ERROR' : fixed(ms, 1),
      spread,
      isFloor ? '1.00×' : b.importError ? 'n/a' : ratio(ms, floorImport),
      b.importError
        ? 'n/a'
        : `${fixed(median(b.importCpuMs), 1)} (${ratio(median(b.importCpuMs), floorCpu)})`,
      isFloor ? '—' : verdict(sizeOk),
      isFloor ? '—' : b.importError ? '**ERROR**' : verdict(importOk),
    ]);
  }
  // Bundle size and import time have no target any more (issue #27: the cold request is what a user feels).

  // Where the bytes over the floor come from (esbuild metafile: bytes each input adds to the output).
  const over = lambdas.filter((b) => b.bytes > BUNDLE_SIZE_MAX * floor.bytes);
  const growthRows = over.map((b) => [
    `\`${b.name}\``,
    `+${kb(b.bytes - floor.bytes)}`,
    growthOverFloor(b, floor, packageOf)
      .slice(0, 5)
      .map((g) => `${g.group} ${kb(g.bytes)}`)
      .join(' · '),
  ]);
  const folders = new Map<string, { bytes: number; in: number }>();
  const files = new Map<string, { bytes: number; in: number }>();
  for (const b of over) {
    for (const g of growthOverFloor(b, floor, folderOf)) {
      const cur = folders.get(g.group) ?? { bytes: 0, in: 0 };
      folders.set(g.group, { bytes: Math.max(cur.bytes, g.bytes), in: cur.in + 1 });
    }
    for (const [input, bytes] of b.inputs) {
      if (floor.inputs.has(input)) continue;
      const cur = files.get(input) ?? { bytes: 0, in: 0 };
      files.set(input, { bytes: Math.max(cur.bytes, bytes), in: cur.in + 1 });
    }
  }
  const top = (m: Map<string, { bytes: number; in: number }>, n: number) =>
    [...m]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, n)
      .map(([k, v]) => [`\`${k.replace(/^node_modules\//, '')}\``, kb(v.bytes), `${v.in} of ${over.length}`]);

  // The largest bundles and what fills them (absolute bytes per package, the floor's included).
  const largest = [...lambdas]
    .filter((b) => !b.buildError)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5)
    .map((b) => [
      `\`${b.name}\``,
      kb(b.bytes),
      [...grouped(b, packageOf)]
        .sort((x, y) => y[1] - x[1])
        .slice(0, 3)
        .map(([group, bytes]) => `${group} ${kb(bytes)}`)
        .join(' · '),
    ]);
  const assetNote = sidecarSection(bundles, floor, coldPaths);
  const typical = [TYPICAL_READ, TYPICAL_CHANGE].flatMap((n) => bundles.filter((b) => b.name === n));

  return [
    '## 2. Lambda bundles: size and import time vs the floor',
    '',
    `Every route's handler and the authorizer, bundled with esbuild ${esbuildVersion} using exactly \`infra/bundling.ts\` ` +
      `(minified ESM, target node20, \`mainFields: module, main\`, nothing external) into \`.bench/bundles/\`. ` +
      `Import time: \`await import()\` of the bundle timed with performance.now() inside a fresh \`node\` ` +
      `(${process.version}, no flags, no NODE_OPTIONS), median of ${importRuns} processes per bundle, run round-robin across bundles; ` +
      'its CPU time (`process.cpuUsage`, all threads) beside it, steadier than wall time when the machine is busy. ' +
      `The FLOOR is \`bench/floor-handler.ts\`: a handler doing one GetItem with the document client.`,
    '',
    table(
      [
        'bundle',
        'serves',
        'bytes',
        'KB',
        'size × floor',
        'import ms (median)',
        'min–max',
        'import × floor',
        'import CPU ms (× floor)',
        `size ≤ ${BUNDLE_SIZE_MAX}×`,
        `import ≤ ${IMPORT_TIME_MAX}×`,
      ],
      rows,
      '---|---|---:|---:|---:|---:|---:|---:|---:|---|---',
    ),
    '',
    assetNote,
    ...lambdas
      .filter((b) => b.buildError || b.importError)
      .map((b) =>
        b.buildError
          ? `\`${b.entry}\` does not build: \`${b.buildError.slice(0, 400)}\`\n`
          : `Import of \`${b.name}\` failed: \`${b.importError?.slice(0, 400)}\`\n`,
      ),
    over.length
      ? [
          '### Where the bytes over the floor come from (esbuild metafile)',
          '',
          'Bytes each package adds to the minified output beyond what it adds to the floor bundle:',
          '',
          table(['bundle', 'KB over floor', 'largest additions (KB)'], growthRows, '---|---:|---'),
          '',
          `Largest folders added over the floor (KB in one bundle; in how many of the ${over.length} bundles over the size target):`,
          '',
          table(['folder', 'KB', 'in'], top(folders, 12), '---|---:|---:'),
          '',
          'Largest single input files not in the floor:',
          '',
          table(['file', 'KB', 'in'], top(files, 12), '---|---:|---:'),
          '',
        ].join('\n')
      : 'No bundle is over the size target.\n',
    metafileSection(floor, typical),
    "### The largest bundles: their three largest packages (absolute, the floor's share included)",
    '',
    table(['bundle', 'KB', 'largest packages (KB)'], largest, '---|---:|---'),
  ].join('\n');
}

// ---- one section alone (BENCH_ONLY) -------------------------------------------------------------
/** Sections that can run alone, by the name BENCH_ONLY takes. */
const ALONE: Record<string, () => Promise<number>> = {
  scaling: scalingAlone,
  console: consoleAlone,
  bundles: bundlesAlone,
  cold: coldAlone,
  concurrency: () => concurrencyAlone(startScalingStack, progress),
  'usage-keys': usageKeysAlone,
  'data-plane': dataPlaneAlone,
  latency: latencyAlone,
};

/** Section 1 on its own main stack (DynamoDB Local, the host with its PostGIS, the floor); the report goes to `.bench/`. */
async function latencyAlone(): Promise<number> {
  installExitHandlers(WATCHDOG_MS);
  progress('BENCH_ONLY=latency: starting DynamoDB Local');
  const mainDynamo = await startMainDynamo();
  const m = await startMainStack(mainDynamo);
  const prepared = await prepareLatency(m);
  const startupMs = Date.now() - startedAt;
  const latency = await measureSection1(
    m,
    mainDynamo.dynamo.endpoint,
    prepared,
    () => ALONE_LATENCY_BUDGET_MS,
  );
  await cleanup();
  const verdicts: Verdicts = { lines: [] };
  const part1 = latencySection(latency, verdicts);
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    '# GeoPlane benchmark — section 1 alone (`BENCH_ONLY=latency`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
      `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s (startup and data ${fixed(startupMs / 1000, 0)} s; ` +
      `unpaired block at most ${fixed(ALONE_LATENCY_BUDGET_MS / 1000, 0)} s)`,
    '',
    '**Targets** (a report: PASS/FAIL never changes the exit code)',
    '',
    ...verdicts.lines,
    '',
    part1,
  ].join('\n');
  const file = join(root, '.bench', 'results-latency.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return 0;
}

/** Section 8's target on the main stack. */
function dataPlaneTarget(m: MainStack, dynamoEndpoint: string): DataPlaneTarget {
  return {
    url: m.host.url,
    dataDir: m.dataDir,
    apiKey: m.host.apiKey as string,
    floorPort: m.floorPort,
    dynamoEndpoint,
    postgis: m.postgis,
  };
}

/** Section 8 on its own main stack (DynamoDB Local, the host with its PostGIS, the floor); the report goes to `.bench/`. */
async function dataPlaneAlone(): Promise<number> {
  installExitHandlers(WATCHDOG_MS);
  progress('data-plane alone: starting DynamoDB Local');
  const mainDynamo = await startMainDynamo();
  const m = await startMainStack(mainDynamo);
  const startupMs = Date.now() - startedAt;
  const outcome = await measureDataPlane(dataPlaneTarget(m, mainDynamo.dynamo.endpoint), progress);
  await cleanup();
  const verdicts: string[] = [];
  const section = dataPlaneSection(outcome, verdicts);
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    '# GeoPlane benchmark — section 8 alone (`npm run bench -- data-plane`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
      `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s (startup of DynamoDB Local, the host with its PostGIS and the floor ` +
      `${fixed(startupMs / 1000, 0)} s)`,
    '',
    ...verdicts,
    '',
    section,
  ].join('\n');
  const file = join(root, '.bench', 'results-data-plane.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return 0;
}

/** The usage-key assignment on its own DynamoDB Local (ADR 0111); the report goes to `.bench/`. */
async function usageKeysAlone(): Promise<number> {
  installExitHandlers(WATCHDOG_MS);
  const run = await measureUsageKeys(progress);
  await cleanup();
  const report = [
    '# GeoPlane benchmark: the usage-key assignment alone (`BENCH_ONLY=usage-keys`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version}`,
    '',
    usageKeysSection(run),
  ].join('\n');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(join(root, '.bench', 'results-usage-keys.md'), report);
  process.stdout.write(`${report}\n(also written to .bench/results-usage-keys.md)\n`);
  return run.distinct ? 0 : 1;
}

/** Section 2 on its own (bundling and import times, nothing started); the report goes to `.bench/`. */
async function bundlesAlone(): Promise<number> {
  progress(`BENCH_ONLY=bundles: bundling ${bundleTargets().length} entry points with infra/bundling.ts`);
  const bundles = await buildBundles(bundleTargets(), bundleDir);
  const floorBuild = bundles.find((b) => b.name === FLOOR_NAME);
  if (floorBuild?.buildError) throw new Error(`the floor handler does not build: ${floorBuild.buildError}`);
  const importRuns = await measureImports(bundles, IMPORT_RUNS, IMPORT_BUDGET_MS, progress);
  const coldPaths = await measureLazyPaths(bundles, importRuns);
  const verdicts: Verdicts = { lines: [] };
  const part2 = bundleSection(bundles, importRuns, verdicts, coldPaths);
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    '# GeoPlane benchmark — section 2 alone (`BENCH_ONLY=bundles`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
      `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s`,
    '',
    ...verdicts.lines,
    '',
    part2,
  ].join('\n');
  const file = join(root, '.bench', 'results-bundles.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return bundles.some((b) => b.importError || b.buildError) ? 1 : 0;
}

/** Section 2's cold requests on their own main stack (every route and the authorizer); the report goes to `.bench/`. */
async function coldAlone(): Promise<number> {
  installExitHandlers(WATCHDOG_MS + COLD_REQUESTS_WATCHDOG_MS);
  progress(`BENCH_ONLY=cold: bundling ${bundleTargets().length} entry points, starting DynamoDB Local`);
  // Its own bundle directory: a run of another section alone rebuilds `.bench/bundles` from scratch.
  const [bundles, mainDynamo] = await Promise.all([
    buildBundles(bundleTargets(), join(root, '.bench', 'bundles-cold')),
    startMainDynamo(),
  ]);
  const floorBuild = bundles.find((b) => b.name === FLOOR_NAME);
  if (floorBuild?.buildError) throw new Error(`the floor handler does not build: ${floorBuild.buildError}`);
  const m = await startMainStack(mainDynamo);
  const stack = {
    dataDir: m.dataDir,
    dynamoEndpoint: mainDynamo.dynamo.endpoint,
    hostUrl: m.host.url,
    apiKey: m.host.apiKey as string,
    postgis: m.postgis,
  };
  const runs = Number(process.env.BENCH_COLD_RUNS) || COLD_REQUEST_RUNS;
  const results = await measureColdRequests(bundles, stack, runs, progress);
  await cleanup();
  const verdicts: string[] = [];
  const section = coldRequestSection(results, verdicts);
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    "# GeoPlane benchmark — section 2's cold requests alone (`BENCH_ONLY=cold`)",
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
      `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s`,
    '',
    ...verdicts,
    '',
    section,
  ].join('\n');
  const file = join(root, '.bench', 'results-cold.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return 0;
}

/** Section 6 on its own (it starts nothing); the report goes to `.bench/`, not bench/results.md. */
async function consoleAlone(): Promise<number> {
  const lines: string[] = [];
  const section = consoleSection(await measureConsole(), lines);
  const report = [
    '# GeoPlane benchmark: the console alone (`BENCH_ONLY=console`)',
    '',
    ...lines,
    '',
    section,
  ].join('\n');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(join(root, '.bench', 'results-console.md'), report);
  process.stdout.write(`${report}\n(also written to .bench/results-console.md)\n`);
  return 0;
}

/** Section 3 on its own stack, nothing else started; the report goes to `.bench/`, not bench/results.md. */
async function scalingAlone(): Promise<number> {
  installExitHandlers(WATCHDOG_MS);
  progress('BENCH_ONLY=scaling: starting the scaling stack');
  const stack = await startScalingStack();
  const setup = await fillScaling(stack, SCALING, progress);
  const scaling = await measureScaling(setup, { ...SCALING, budgetMs: () => SCALING_BUDGET_MS }, progress);
  await cleanup();
  const verdicts: string[] = [];
  const part3 = scalingSection(scaling, SCALING, verdicts);
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    '# GeoPlane benchmark — section 3 alone (`BENCH_ONLY=scaling`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
      `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s`,
    '',
    ...verdicts,
    '',
    part3,
  ].join('\n');
  const file = join(root, '.bench', 'results-scaling.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return 0;
}

// ---- main ---------------------------------------------------------------------------------------
async function main(): Promise<number> {
  // `BENCH_ONLY=<section>` or `npm run bench -- <section>`.
  const only = process.env.BENCH_ONLY || process.argv[2];
  if (only) {
    const section = Object.hasOwn(ALONE, only) ? ALONE[only] : undefined;
    if (!section)
      throw new Error(
        `section '${only}' does not run alone; the sections that do: ${Object.keys(ALONE).join(', ')}`,
      );
    return section();
  }
  installExitHandlers(WATCHDOG_MS + IMPORTS_WATCHDOG_MS + COLD_REQUESTS_WATCHDOG_MS);
  // Startups that cost no CPU once up run beside the bundling (not measured): the scaling stack
  // (DynamoDB Local in memory, a host without PostGIS, a floor server) and the main DynamoDB Local.
  progress('starting the scaling stack and DynamoDB Local beside the bundling');
  const scalingStackPromise = startScalingStack();
  const mainDynamoPromise = startMainDynamo();
  scalingStackPromise.catch(() => {});
  mainDynamoPromise.catch(() => {});
  progress(`bundling ${bundleTargets().length} entry points with infra/bundling.ts`);
  const bundles = await buildBundles(bundleTargets(), bundleDir);
  const floorBuild = bundles.find((b) => b.name === FLOOR_NAME);
  if (floorBuild?.buildError) throw new Error(`the floor handler does not build: ${floorBuild.buildError}`);
  for (const b of bundles.filter((x) => x.buildError))
    progress(`does not build: ${b.entry}: ${b.buildError}`);
  const [scalingStack, mainDynamo] = await Promise.all([scalingStackPromise, mainDynamoPromise]);
  const phases: [string, number][] = [['bundling and idle startups', Date.now() - startedAt]];
  let t = Date.now();
  const importRuns = await measureImports(bundles, IMPORT_RUNS, IMPORT_BUDGET_MS, progress);
  const coldPaths = await measureLazyPaths(bundles, importRuns);
  phases.push(['import times', Date.now() - t]);

  // Startup and data, nothing measured: the main host's PostGIS initialises while the scaling
  // stack is filled beside it.
  t = Date.now();
  const mainPromise = startMainStack(mainDynamo).then(async (m) => ({
    m,
    prepared: await prepareLatency(m),
  }));
  const scalingPromise = fillScaling(scalingStack, SCALING, progress);
  mainPromise.catch(() => {});
  scalingPromise.catch(() => {});
  const [{ m, prepared }, scalingSetup] = await Promise.all([mainPromise, scalingPromise]);
  phases.push(['host with PostGIS, data and seeding (side by side)', Date.now() - t]);

  t = Date.now();
  const scaling = await measureScaling(scalingSetup, { ...SCALING, budgetMs: scalingBudget }, progress);
  phases.push(['scaling run (measured pages)', Date.now() - t]);
  t = Date.now();
  const concurrency = await measureConcurrency(concurrencyTarget(scalingStack, scalingSetup.small), progress);
  phases.push(['concurrency run (section 7)', Date.now() - t]);
  t = Date.now();
  // Section 4 on the scaling stack (DynamoDB Local in memory, no PostGIS), in workspaces of its own.
  const deletion = await measureDeletion({ ...scalingStack, table: 'geoplane' }, progress);
  await stopNow(CLEANUP_PREFIX);
  phases.push(['deletion run (seeding and deletes)', Date.now() - t]);

  t = Date.now();
  const latency = await measureSection1(m, mainDynamo.dynamo.endpoint, prepared, latencyBudget);
  phases.push(['section 1 (warm-up, measured and paired rounds, list phases)', Date.now() - t]);
  // Section 2's cold requests: fresh processes against the main stack, idle by now.
  t = Date.now();
  const coldRequests = await measureColdRequests(
    bundles,
    {
      dataDir: m.dataDir,
      dynamoEndpoint: mainDynamo.dynamo.endpoint,
      hostUrl: m.host.url,
      apiKey: m.host.apiKey as string,
      postgis: m.postgis,
      workspaceId: prepared.demo,
      serviceId: prepared.serviceId,
    },
    COLD_REQUEST_RUNS,
    progress,
  );
  phases.push(['cold requests (section 2)', Date.now() - t]);
  // Section 8 (bench/data-plane.ts) on the same main stack, after section 1 so its table and
  // workspace are not there while section 1 measures. A failure here is reported, not fatal.
  t = Date.now();
  let dataPlane: DataPlaneOutcome | Error;
  try {
    dataPlane = await measureDataPlane(dataPlaneTarget(m, mainDynamo.dynamo.endpoint), progress);
  } catch (error) {
    progress(`data plane: not measured: ${(error as Error).message}`);
    dataPlane = error as Error;
  }
  phases.push(['section 8 (data plane)', Date.now() - t]);
  // Section 9 (bench/recovery.ts): runaways on the main stack's embedded PostGIS, after everything
  // else that uses it (its restarts disturb nothing later). A failure here is reported, not fatal.
  t = Date.now();
  let part9Of: (lines: string[]) => string;
  try {
    const { measureRecovery, recoverySection } = await import('./recovery.ts');
    const target = { host: m.host, dataDir: m.dataDir, apiKey: m.host.apiKey as string };
    const recovery = await measureRecovery(target, progress);
    part9Of = (lines) => recoverySection(recovery, lines);
  } catch (error) {
    progress(`recovery: not measured: ${(error as Error).message}`);
    part9Of = (lines) => {
      lines.push('- time to first good answer after a runaway: **NOT MEASURED** (see section 9)');
      return `## 9. The embedded PostGIS after a runaway\n\nNot measured: \`${(error as Error).message.slice(0, 400)}\``;
    };
  }
  phases.push(['section 9 (recovery after a runaway)', Date.now() - t]);
  // ---- section 5 (bench/imports.ts) --------------------------------------------------------------
  // Last and alone: sections 1–4's processes are stopped first (stopNow, so the final cleanup()
  // still covers what section 5 registers); it stops its own PostgreSQL and children itself.
  t = Date.now();
  await stopNow('');
  const imports = await measureImportLoads(progress);
  phases.push(['section 5 (imports: files, PostgreSQL, loads)', Date.now() - t]);
  // ---- end of section 5 ---------------------------------------------------------------------------

  // Section 6: the console's bundles (a build and file sizes; nothing runs).
  t = Date.now();
  const consoleOutcome = await measureConsole();
  phases.push(['section 6 (console build)', Date.now() - t]);

  progress('measured; stopping everything the benchmark started');
  t = Date.now();
  await cleanup();
  phases.push(['stopping everything', Date.now() - t]);

  const seconds = (Date.now() - startedAt) / 1000;
  const verdicts: Verdicts = { lines: [] };
  const part1 = latencySection(latency, verdicts);
  const part2 = `${bundleSection(bundles, importRuns, verdicts, coldPaths)}\n\n${coldRequestSection(coldRequests, verdicts.lines)}`;
  const part3 = scalingSection(scaling, SCALING, verdicts.lines);
  const part4 = deletionSection(deletion, verdicts.lines);
  const part5 = importsSection(imports, verdicts.lines);
  const part6 = consoleSection(consoleOutcome, verdicts.lines);
  if (dataPlane instanceof Error) verdicts.lines.push('- data plane: **NOT MEASURED** (see section 8)');
  const part8 =
    dataPlane instanceof Error
      ? `## 8. Data plane: the OGC API vs its SQL\n\nNot measured: \`${dataPlane.message.slice(0, 400)}\``
      : dataPlaneSection(dataPlane, verdicts.lines);
  const part9 = part9Of(verdicts.lines);
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const busy = Math.max(loadAtStart[0] ?? 0, loadavg()[0] ?? 0) > cpus().length;
  const report = [
    '# GeoPlane benchmark (`npm run bench`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${process.platform} ${process.arch} · ` +
      `${cpus().length} × ${cpu} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed(seconds, 0)} s (${phases.map(([what, ms]) => `${what} ${fixed(ms / 1000, 0)} s`).join(', ')})`,
    '',
    ...(busy
      ? [
          `> **The machine was busy** (load average above its ${cpus().length} CPUs): other processes competed ` +
            'with the benchmark, so latencies and import times are noisier and slower than on an idle machine.\n',
        ]
      : []),
    '**Targets** (a report: PASS/FAIL never changes the exit code)',
    '',
    ...verdicts.lines,
    '',
    part1,
    '',
    part2,
    '',
    part3,
    '',
    part4,
    '',
    part5,
    '',
    part6,
    '',
    concurrencySection(concurrency),
    '',
    part8,
    '',
    part9,
  ].join('\n');
  // Tables come aligned from `table()` (biome leaves markdown alone).
  writeFileSync(resultsFile, report);
  process.stdout.write(`${readFileSync(resultsFile, 'utf8')}\n(also written to bench/results.md)\n`);
  return bundles.some((b) => b.importError || b.buildError) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    // After a signal the stopped children make the run fail; the signal handler exits.
    if (wasInterrupted()) return;
    process.stderr.write(`\nbenchmark failed: ${(error as Error).stack ?? error}\n`);
    await cleanup();
    process.exit(1);
  },
);
