/**
 * The sections of `npm run bench` that run alone (`BENCH_ONLY=<section>` or `npm run bench --
 * <section>`), each on a stack of its own, its report written to `.bench/results-<section>.md`.
 */
import { join } from 'node:path';
import { bundleDir, bundleSection, bundleTargets, floorBuilt, measureLazyPaths } from './bundle-section.ts';
import { buildBundles, measureImports, root } from './bundles.ts';
import { cleanup, installExitHandlers } from './cleanup.ts';
import { COLD_REQUESTS_WATCHDOG_MS, coldRequestSection, measureColdRequests } from './cold-requests.ts';
import { concurrencyAlone } from './concurrency.ts';
import { consoleSection, measureConsole } from './console.ts';
import { measureDataPlane } from './data-plane.ts';
import { dataPlaneSection } from './data-plane-report.ts';
import { IMPORTS_WATCHDOG_MS, importsSection, measureImportLoads } from './imports.ts';
import { latencySection, type Verdicts } from './latency-report.ts';
import { measureSection1, prepareLatency } from './latency-section.ts';
import { coldStackOf, dataPlaneTarget, startMainDynamo, startMainStack } from './main-stack.ts';
import {
  ALONE_LATENCY_BUDGET_MS,
  COLD_REQUEST_RUNS,
  IMPORT_BUDGET_MS,
  IMPORT_RUNS,
  progress,
  SCALING,
  SCALING_BUDGET_MS,
  startedAt,
  WATCHDOG_MS,
} from './run-plan.ts';
import { aloneReport, gitDescription, writeAloneReport } from './run-report.ts';
import { fillScaling, measureScaling, scalingSection, startScalingStack } from './scaling.ts';
import { fixed } from './stats.ts';
import { measureUsageKeys, usageKeysSection } from './usage-keys.ts';

/** Sections that can run alone, by the name BENCH_ONLY takes. */
export const ALONE: Record<string, () => Promise<number>> = {
  scaling: scalingAlone,
  console: consoleAlone,
  bundles: bundlesAlone,
  cold: coldAlone,
  concurrency: () => concurrencyAlone(startScalingStack, progress),
  'usage-keys': usageKeysAlone,
  'data-plane': dataPlaneAlone,
  latency: latencyAlone,
  imports: importsAlone,
};

/** Section 5 on its own (files, Debian's PostgreSQL, the embedded PostGIS, ogr2ogr); the report goes to `.bench/`. */
async function importsAlone(): Promise<number> {
  installExitHandlers(IMPORTS_WATCHDOG_MS);
  const outcome = await measureImportLoads(progress);
  await cleanup();
  const verdicts: string[] = [];
  const section = importsSection(outcome, verdicts);
  const report = aloneReport(
    '# GeoPlane benchmark — section 5 alone (`BENCH_ONLY=imports`)',
    verdicts,
    section,
    `section 5 ${fixed(outcome.ms / 1000, 0)} s`,
  );
  writeAloneReport('imports', report);
  return 0;
}

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
  const report = aloneReport(
    '# GeoPlane benchmark — section 1 alone (`BENCH_ONLY=latency`)',
    ['**Targets** (a report: PASS/FAIL never changes the exit code)', '', ...verdicts.lines],
    part1,
    `startup and data ${fixed(startupMs / 1000, 0)} s; ` +
      `unpaired block at most ${fixed(ALONE_LATENCY_BUDGET_MS / 1000, 0)} s`,
  );
  writeAloneReport('latency', report);
  return 0;
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
  const report = aloneReport(
    '# GeoPlane benchmark — section 8 alone (`npm run bench -- data-plane`)',
    verdicts,
    section,
    `startup of DynamoDB Local, the host with its PostGIS and the floor ${fixed(startupMs / 1000, 0)} s`,
  );
  writeAloneReport('data-plane', report);
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
  writeAloneReport('usage-keys', report, '.bench/results-usage-keys.md');
  return run.distinct ? 0 : 1;
}

/** Section 2 on its own (bundling and import times, nothing started); the report goes to `.bench/`. */
async function bundlesAlone(): Promise<number> {
  progress(`BENCH_ONLY=bundles: bundling ${bundleTargets().length} entry points with infra/bundling.ts`);
  const bundles = floorBuilt(await buildBundles(bundleTargets(), bundleDir));
  const importRuns = await measureImports(bundles, IMPORT_RUNS, IMPORT_BUDGET_MS, progress);
  const coldPaths = await measureLazyPaths(bundles, importRuns);
  const verdicts: Verdicts = { lines: [] };
  const part2 = bundleSection(bundles, importRuns, verdicts, coldPaths);
  writeAloneReport(
    'bundles',
    aloneReport('# GeoPlane benchmark — section 2 alone (`BENCH_ONLY=bundles`)', verdicts.lines, part2),
  );
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
  floorBuilt(bundles);
  const m = await startMainStack(mainDynamo);
  const runs = Number(process.env.BENCH_COLD_RUNS) || COLD_REQUEST_RUNS;
  // A lab's narrowing: BENCH_COLD_ROUTES=<operationId,…> (the authorizer as `authorizer`), BENCH_COLD_PARALLEL=1.
  const only = process.env.BENCH_COLD_ROUTES ? new Set(process.env.BENCH_COLD_ROUTES.split(',')) : undefined;
  const parallel = Number(process.env.BENCH_COLD_PARALLEL) || 2;
  const results = (
    await measureColdRequests(bundles, coldStackOf(m, mainDynamo), runs, progress, parallel, only)
  ).filter((r) => r.id === 'FLOOR' || !only || only.has(r.id));
  await cleanup();
  const verdicts: string[] = [];
  const section = coldRequestSection(results, verdicts);
  writeAloneReport(
    'cold',
    aloneReport(
      "# GeoPlane benchmark — section 2's cold requests alone (`BENCH_ONLY=cold`)",
      verdicts,
      section,
    ),
  );
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
  writeAloneReport('console', report, '.bench/results-console.md');
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
  writeAloneReport(
    'scaling',
    aloneReport('# GeoPlane benchmark — section 3 alone (`BENCH_ONLY=scaling`)', verdicts, part3),
  );
  return 0;
}
