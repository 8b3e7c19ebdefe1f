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
 * `.bench/results-cold.md`; `BENCH_COLD_RUNS` sets its runs per route (default 10, each a pair
 * with a floor run); `BENCH_COLD_CPU_PROF=<dir>` has every fresh process write its CPU profile there.
 * Section 8, the data plane (bench/data-plane.ts: the workspace's OGC API vs its SQL, on the main
 * stack after section 1), runs alone with `npm run bench -- data-plane` (or `BENCH_ONLY=data-plane`)
 * into `.bench/results-data-plane.md`. Every section that runs alone is named either way.
 * `BENCH_ONLY=imports` runs section 5 alone (its files, PostgreSQL, ogr2ogr and the embedded PostGIS;
 * ~13 minutes) into `.bench/results-imports.md`.
 * Section 9, the embedded PostGIS's time to a first good answer after a runaway (bench/recovery.ts,
 * ADR 0142), runs on the main stack after section 8; alone with `npx tsx bench/recovery.ts`.
 * Where its parts live: run-plan.ts (counts, budgets, the clock), main-stack.ts, latency-section.ts
 * and latency-report.ts (section 1), bundle-section.ts (section 2), run-report.ts (report lines and
 * files), alone.ts (the sections that run alone).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { ALONE } from './alone.ts';
import {
  bundleDir,
  bundleSection,
  bundleTargets,
  floorBuilt,
  measureLazyPaths,
  resultsFile,
} from './bundle-section.ts';
import { buildBundles, measureImports } from './bundles.ts';
import { cleanup, installExitHandlers, stopNow, wasInterrupted } from './cleanup.ts';
import { COLD_REQUESTS_WATCHDOG_MS, coldRequestSection, measureColdRequests } from './cold-requests.ts';
import { concurrencySection, concurrencyTarget, measureConcurrency } from './concurrency.ts';
import { consoleSection, measureConsole } from './console.ts';
import { measureDataPlane } from './data-plane.ts';
import { dataPlaneSection } from './data-plane-report.ts';
import type { DataPlaneOutcome } from './data-plane-types.ts';
import { deletionSection, measureDeletion } from './deletion.ts';
import { IMPORTS_WATCHDOG_MS, importsSection, measureImportLoads } from './imports.ts';
import { latencySection, type Verdicts } from './latency-report.ts';
import { measureSection1, prepareLatency } from './latency-section.ts';
import { coldStackOf, dataPlaneTarget, startMainDynamo, startMainStack } from './main-stack.ts';
import {
  COLD_REQUEST_RUNS,
  IMPORT_BUDGET_MS,
  IMPORT_RUNS,
  latencyBudget,
  loadAtStart,
  progress,
  SCALING,
  scalingBudget,
  startedAt,
  WATCHDOG_MS,
} from './run-plan.ts';
import { gitDescription, loadText } from './run-report.ts';
import { CLEANUP_PREFIX, fillScaling, measureScaling, scalingSection, startScalingStack } from './scaling.ts';
import { fixed } from './stats.ts';

// The SDK's notice about Node 22 would interrupt the progress lines (the versions are pinned).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
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
  const bundles = floorBuilt(await buildBundles(bundleTargets(), bundleDir), true);
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
    coldStackOf(m, mainDynamo, { workspaceId: prepared.demo, serviceId: prepared.serviceId }),
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
  const busy = Math.max(loadAtStart[0] ?? 0, loadavg()[0] ?? 0) > cpus().length;
  const report = [
    '# GeoPlane benchmark (`npm run bench`)',
    '',
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${process.platform} ${process.arch} · ` +
      `${cpus().length} × ${cpu} · load average ${loadText(loadAtStart)} at start, ${loadText(loadavg())} at end · ` +
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
