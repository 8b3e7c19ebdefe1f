/** Section 2 of `npm run bench`: minified bundle size and import time of every Lambda, next to the FLOOR handler. */
import { join } from 'node:path';
import { version as esbuildVersion } from 'esbuild';
import { routes } from '#api/routes.ts';
import {
  type Bundle,
  type BundleTarget,
  type ColdPath,
  coldPathsOf,
  folderOf,
  grouped,
  growthOverFloor,
  measureColdPaths,
  metafileSection,
  packageOf,
  root,
  sidecarSection,
} from './bundles.ts';
import type { Verdicts } from './latency-report.ts';
import { progress } from './run-plan.ts';
import { fixed, kb, median, ratio, table, thousands, verdict } from './stats.ts';

const BUNDLE_SIZE_MAX = 1.25;
const IMPORT_TIME_MAX = 1.25;

export const FLOOR_NAME = 'floor/floor-handler';
/** The bundles whose metafile section 2 shows against the floor's: a typical read and a typical change. */
const TYPICAL_READ = 'workspaces/get-workspace';
const TYPICAL_CHANGE = 'workspaces/update-workspace';
const AUTHORIZER_ENTRY = 'functions/authorizer/index.ts';
export const bundleDir = join(root, '.bench', 'bundles');
export const resultsFile = join(root, 'bench', 'results.md');

// ---- part 2 helpers -----------------------------------------------------------------------------
export function bundleTargets(): BundleTarget[] {
  const byHandler = new Map<string, string[]>();
  for (const op of routes) byHandler.set(op.handler, [...(byHandler.get(op.handler) ?? []), op.operationId]);
  const name = (entry: string) => entry.replace(/^functions\//, '').replace(/\.ts$/, '');
  return [
    { name: FLOOR_NAME, label: 'FLOOR (one GetItem)', entry: 'bench/floor-handler.ts' },
    { name: name(AUTHORIZER_ENTRY), label: 'authorizer', entry: AUTHORIZER_ENTRY },
    ...[...byHandler].map(([entry, ids]) => ({ name: name(entry), label: ids.join(', '), entry })),
  ];
}

/** Import time plus the lazy load of the routes whose heavy part sits beside their bundle (ADR 0100). */
export async function measureLazyPaths(bundles: Bundle[], runs: number): Promise<ColdPath[]> {
  const paths = coldPathsOf(
    bundles,
    bundles.find((b) => b.name === TYPICAL_READ),
  );
  progress(`cold paths: ${paths.length} lazily loaded paths, ${runs} runs`);
  await measureColdPaths(paths, runs);
  return paths;
}

export function bundleSection(
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

/** The bundles, once the floor handler is known to build (every section compares with it); progress names any other that doesn't. */
export function floorBuilt(bundles: Bundle[], report = false): Bundle[] {
  const floorBuild = bundles.find((b) => b.name === FLOOR_NAME);
  if (floorBuild?.buildError) throw new Error(`the floor handler does not build: ${floorBuild.buildError}`);
  if (report)
    for (const b of bundles.filter((x) => x.buildError))
      progress(`does not build: ${b.entry}: ${b.buildError}`);
  return bundles;
}
