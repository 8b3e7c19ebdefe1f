/**
 * `npm run bench`: a report, not a test (DESIGN §10, ADR 0020). Measures
 *   1. request latency of getWorkspace and listWorkspaces against the local host, next to THE
 *      FLOOR (a bare HTTPS server doing one DynamoDB Local GetItem) measured in the same run;
 *   2. minified bundle size and import time of every Lambda, next to the FLOOR handler.
 * Prints markdown (also written to bench/results.md), marks each target PASS/FAIL, and exits 0
 * whenever the measurement itself succeeded. Everything it starts is stopped, also on errors.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { version as esbuildVersion } from 'esbuild';
import { type DynamoLocal, startDynamoLocal } from '../infra/local/dynamodb.ts';
import { localIssuer } from '../infra/local/files.ts';
import { routes } from '../shared/api/routes.ts';
import { ROLES_CLAIM } from '../shared/auth/authenticate.ts';
import { type HostProcess, startHostProcess } from '../test/support/host-process.ts';
import { freePort } from '../test/support/ports.ts';
import {
  type Bundle,
  type BundleTarget,
  buildBundles,
  folderOf,
  growthOverFloor,
  measureImports,
  packageOf,
  root,
} from './bundles.ts';
import { cleanup, installExitHandlers, onCleanup, wasInterrupted } from './cleanup.ts';
import { type LatencyCase, type LatencyResult, measureLatency, send } from './latency.ts';
import { fixed, kb, mean, median, percentile, ratio, table, thousands, verdict } from './stats.ts';

// ---- plan (bounded in count and in time) --------------------------------------------------------
const WORKSPACES = 100;
const LIST_LIMIT = 50;
const WARMUP = 100;
const ROUNDS = 10;
const PER_ROUND = 100; // ROUNDS × PER_ROUND = 1000 measured requests per case at most
const LATENCY_BUDGET_MS = 75_000;
/** The whole run aims to end by then: on a busy machine the latency budget shrinks (to 30 s at least). */
const RUN_TARGET_MS = 150_000;
const IMPORT_RUNS = 5;
const IMPORT_BUDGET_MS = 45_000;
const WATCHDOG_MS = 6 * 60_000;

// ---- targets ------------------------------------------------------------------------------------
const READ_P50_MAX = 1.5;
const BUNDLE_SIZE_MAX = 1.25;
const IMPORT_TIME_MAX = 1.25;

const FLOOR_NAME = 'floor/floor-handler';
const AUTHORIZER_ENTRY = 'functions/authorizer/index.ts';
const bundleDir = join(root, '.bench', 'bundles');
const resultsFile = join(root, 'bench', 'results.md');
const awsEnv = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

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
function startFloorServer(tlsDir: string, endpoint: string): { ready: Promise<number>; child: ChildProcess } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floor-server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      ...awsEnv,
      BENCH_TLS_DIR: tlsDir,
      DYNAMODB_ENDPOINT: endpoint,
      TABLE_NAME: 'geoplane',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`floor server not ready in 30 s:\n${output}`)), 30_000);
    const onData = (d: Buffer) => {
      output += d;
      const m = /^ready (\d+)$/m.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`floor server exited (${code}):\n${output}`));
    });
  });
  ready.catch(() => {});
  return { ready, child };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function expect(condition: unknown, message: string): void {
  if (!condition) throw new Error(message);
}

interface LatencyOutcome {
  results: LatencyResult[];
  truncated: boolean;
  budgetMs: number;
  workspaceCount: number;
  dynamoStartMs: number;
  hostStartMs: number;
}

async function latencyPart(): Promise<LatencyOutcome> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-'));
  onCleanup('data dir', () => rmSync(dataDir, { recursive: true, force: true }));

  progress('starting DynamoDB Local');
  let t = Date.now();
  const dynamoPromise = freePort().then((port) => startDynamoLocal(port, join(dataDir, 'dynamodb')));
  onCleanup('DynamoDB Local', async () => (await dynamoPromise.catch(() => undefined))?.stop());
  const dynamo: DynamoLocal = await dynamoPromise;
  const dynamoStartMs = Date.now() - t;

  progress('starting the local host');
  t = Date.now();
  const hostPromise = startHostProcess({
    GEOPLANE_DATA_DIR: dataDir,
    GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
    // The benchmark sends far more than the default 50 rps of one usage key: no 429s wanted here.
    GEOPLANE_RATE_LIMIT_RPS: '1000000',
    GEOPLANE_RATE_LIMIT_BURST: '1000000',
  });
  onCleanup('local host', async () => (await hostPromise.catch(() => undefined))?.stop());
  const host: HostProcess = await hostPromise;
  const hostStartMs = Date.now() - t;
  expect(host.apiKey, `the local host wrote no bootstrap key in ${dataDir}`);

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

  progress(`creating ${WORKSPACES} workspaces`);
  const ids: string[] = [];
  for (let i = 0; i < WORKSPACES; i++) {
    const name = `bench-${String(i).padStart(3, '0')}`;
    const reply = await send(agent, 'POST', `${host.url}/workspaces`, auth, JSON.stringify({ name }));
    expect(reply.status === 201, `createWorkspace ${name} answered ${reply.status}: ${reply.text}`);
    ids.push(JSON.parse(reply.text).id);
  }
  const listed = JSON.parse((await send(agent, 'GET', `${host.url}/workspaces?limit=1000`, auth)).text);
  const workspaceCount = (listed.workspaces as unknown[]).length;
  const id = ids[Math.floor(ids.length / 2)] as string;

  // A workspace viewer's token from the local issuer: the read path without the API-key lookup.
  const issuer = await localIssuer(dataDir);
  const token = await issuer.sign({ [ROLES_CLAIM]: { [id]: 'viewer' } }, 'bench-viewer', 3600);
  const bearer = { Authorization: `Bearer ${token}` };
  const sameId = (body: unknown) => expect((body as { id?: string }).id === id, `expected workspace ${id}`);
  const cases: LatencyCase[] = [
    { id: 'floor', url: `https://127.0.0.1:${floorPort}/floor/${id}`, check: sameId },
    { id: 'getWorkspace', url: `${host.url}/workspaces/${id}`, headers: auth, check: sameId },
    { id: 'getWorkspaceJwt', url: `${host.url}/workspaces/${id}`, headers: bearer, check: sameId },
    {
      id: 'listWorkspaces',
      url: `${host.url}/workspaces?limit=${LIST_LIMIT}`,
      headers: auth,
      check: (body) => {
        const n = (body as { workspaces?: unknown[] }).workspaces?.length;
        expect(n === LIST_LIMIT, `listWorkspaces returned ${n} workspaces, expected ${LIST_LIMIT}`);
      },
    },
    { id: 'floor2', url: `https://127.0.0.1:${floorPort}/floor/${id}?gets=2`, check: sameId },
    {
      id: 'floorList',
      url: `https://127.0.0.1:${floorPort}/floor-list?limit=${LIST_LIMIT}`,
      check: (body) => {
        const n = (body as { workspaces?: unknown[] }).workspaces?.length;
        expect(n === LIST_LIMIT, `the floor's list Query returned ${n} items, expected ${LIST_LIMIT}`);
      },
    },
  ];
  progress(`latency: ${WARMUP} warm-up requests per case`);
  const { results, truncated, budgetMs } = await measureLatency(
    agent,
    cases,
    { warmup: WARMUP, rounds: ROUNDS, perRound: PER_ROUND, budgetMs: latencyBudget },
    progress,
  );
  return { results, truncated, budgetMs, workspaceCount, dynamoStartMs, hostStartMs };
}

/** What is left of the run's time target for the measured rounds (they start after the warm-up). */
function latencyBudget(): number {
  const left = RUN_TARGET_MS - (Date.now() - startedAt) - 10_000;
  return Math.max(30_000, Math.min(LATENCY_BUDGET_MS, left));
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
    listWorkspaces: [
      `listWorkspaces (limit ${LIST_LIMIT}, API key)`,
      `GET /api/v1/workspaces?limit=${LIST_LIMIT}`,
    ],
    floor2: ['reference: floor with 2 GetItems', 'GET /floor/{id}?gets=2'],
    floorList: [
      `reference: floor with listWorkspaces' Query (limit ${LIST_LIMIT})`,
      `GET /floor-list?limit=${LIST_LIMIT}`,
    ],
  };
  for (const r of outcome.results) {
    const p50 = percentile(r.samples, 50);
    const p95 = percentile(r.samples, 95);
    const p99 = percentile(r.samples, 99);
    const isRead = !r.id.startsWith('floor');
    const pass = p50 <= READ_P50_MAX * f.p50;
    const [what, request] = describe[r.id] ?? [r.id, ''];
    if (isRead) {
      verdicts.lines.push(
        `- ${what} p50 ≤ ${READ_P50_MAX}× floor: ${verdict(pass)} (${ratio(p50, f.p50)}: ${fixed(p50)} ms vs ${fixed(f.p50)} ms)`,
      );
    }
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
      isRead ? `p50 ≤ ${READ_P50_MAX}×` : '—',
      isRead ? verdict(pass) : '—',
    ]);
  }
  const reconnects = outcome.results.filter((r) => r.reconnects > 0);
  return [
    '## 1. Request latency: local host vs the floor',
    '',
    `Sequential GETs over one keep-alive HTTPS connection per server (node:https Agent, the host's self-signed certificate as \`ca\`), ` +
      `${WARMUP} warm-up requests per case, then up to ${ROUNDS} rounds × ${PER_ROUND} requests per case with the case order rotating per round. ` +
      `Time from the request call to the last byte of the answer, in ms; percentiles are nearest-rank. ` +
      `The host runs \`infra/local/main.ts\` (API Gateway emulation, the REQUEST authorizer with its API-key GetItem, then the handler) ` +
      `with the rate limit lifted; the floor and the host use the same DynamoDB Local (on disk) and table, ` +
      `reading the same workspace item with ConsistentRead. ${outcome.workspaceCount} workspaces exist.`,
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
    `Startup (not measured above): DynamoDB Local ${fixed(outcome.dynamoStartMs / 1000, 1)} s, local host ${fixed(outcome.hostStartMs / 1000, 1)} s.`,
  ].join('\n');
}

function bundleSection(bundles: Bundle[], importRuns: number, verdicts: Verdicts): string {
  const floor = bundles.find((b) => b.name === FLOOR_NAME) as Bundle;
  const floorImport = median(floor.importMs);
  const rows: string[][] = [];
  let sizePass = 0;
  let importPass = 0;
  const lambdas = bundles.filter((b) => b !== floor);
  for (const b of bundles) {
    const isFloor = b === floor;
    if (b.buildError) {
      rows.push([`\`${b.name}\``, b.label, 'BUILD ERROR', '', '', '', '', '', '**ERROR**', '**ERROR**']);
      continue;
    }
    const ms = median(b.importMs);
    const sizeOk = b.bytes <= BUNDLE_SIZE_MAX * floor.bytes;
    const importOk = !b.importError && ms <= IMPORT_TIME_MAX * floorImport;
    if (!isFloor && sizeOk) sizePass++;
    if (!isFloor && importOk) importPass++;
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
      isFloor ? '—' : verdict(sizeOk),
      isFloor ? '—' : b.importError ? '**ERROR**' : verdict(importOk),
    ]);
  }
  verdicts.lines.push(
    `- bundle size ≤ ${BUNDLE_SIZE_MAX}× floor (${kb(BUNDLE_SIZE_MAX * floor.bytes)} KB): ${verdict(sizePass === lambdas.length)} (${sizePass} of ${lambdas.length} Lambdas within)`,
    `- import time ≤ ${IMPORT_TIME_MAX}× floor (${fixed(IMPORT_TIME_MAX * floorImport, 1)} ms): ${verdict(importPass === lambdas.length)} (${importPass} of ${lambdas.length} Lambdas within)`,
  );

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

  const zodLocales = (b: Bundle) =>
    [...b.inputs].filter(([i]) => /zod\/v4\/locales\//.test(i)).reduce((s, [, n]) => s + n, 0);
  const sample = over[0];

  return [
    '## 2. Lambda bundles: size and import time vs the floor',
    '',
    `Every route's handler and the authorizer, bundled with esbuild ${esbuildVersion} using exactly \`infra/bundling.ts\` ` +
      `(minified ESM, target node20, \`mainFields: module, main\`, nothing external) into \`.bench/bundles/\`. ` +
      `Import time: \`await import()\` of the bundle timed with performance.now() inside a fresh \`node\` ` +
      `(${process.version}, no flags, no NODE_OPTIONS), median of ${importRuns} processes per bundle, run round-robin across bundles. ` +
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
        `size ≤ ${BUNDLE_SIZE_MAX}×`,
        `import ≤ ${IMPORT_TIME_MAX}×`,
      ],
      rows,
      '---|---|---:|---:|---:|---:|---:|---:|---|---',
    ),
    '',
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
          sample && zodLocales(sample) > 0
            ? `In \`${sample.name}\`, zod's locale files (\`zod/v4/locales/*\`, ${[...sample.inputs.keys()].filter((i) => /zod\/v4\/locales\//.test(i)).length} languages) alone are ${kb(zodLocales(sample))} KB.`
            : '',
        ].join('\n')
      : 'No bundle is over the size target.',
  ].join('\n');
}

// ---- main ---------------------------------------------------------------------------------------
async function main(): Promise<number> {
  installExitHandlers(WATCHDOG_MS);
  progress(`bundling ${bundleTargets().length} entry points with infra/bundling.ts`);
  const bundles = await buildBundles(bundleTargets(), bundleDir);
  const floorBuild = bundles.find((b) => b.name === FLOOR_NAME);
  if (floorBuild?.buildError) throw new Error(`the floor handler does not build: ${floorBuild.buildError}`);
  for (const b of bundles.filter((x) => x.buildError))
    progress(`does not build: ${b.entry}: ${b.buildError}`);
  const importRuns = await measureImports(bundles, IMPORT_RUNS, IMPORT_BUDGET_MS, progress);
  const latency = await latencyPart();
  progress('measured; stopping everything the benchmark started');
  await cleanup();

  const seconds = (Date.now() - startedAt) / 1000;
  const verdicts: Verdicts = { lines: [] };
  const part1 = latencySection(latency, verdicts);
  const part2 = bundleSection(bundles, importRuns, verdicts);
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const busy = Math.max(loadAtStart[0] ?? 0, loadavg()[0] ?? 0) > cpus().length;
  const report = [
    '# GeoPlane benchmark (`npm run bench`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${process.platform} ${process.arch} · ` +
      `${cpus().length} × ${cpu} · load average ${load(loadAtStart)} at start, ${load(loadavg())} at end · ` +
      `run took ${fixed(seconds, 0)} s`,
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
  ].join('\n');
  writeFileSync(resultsFile, report);
  // The repository's formatter owns markdown too (aligned tables); format so `biome check` stays clean.
  try {
    execFileSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', resultsFile], {
      cwd: root,
      stdio: 'ignore',
      timeout: 30_000,
    });
  } catch {
    progress('could not format bench/results.md with biome; written as generated');
  }
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
