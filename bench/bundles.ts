import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { bundling, SIDECAR_DIR, type StagedAsset, sidecarEntryPoints, stageBeside } from '#infra/bundling.ts';
import { kb, median, table } from './stats.ts';

export const root = resolve(import.meta.dirname, '..');

/** One Lambda entry point to bundle. */
export interface BundleTarget {
  /** Output name, e.g. `workspaces/get-workspace` (also the file under the output dir). */
  name: string;
  /** What it serves, e.g. `getWorkspace`. */
  label: string;
  /** Entry module relative to the repository root. */
  entry: string;
}

/** A built bundle and what is in it. */
export interface Bundle extends BundleTarget {
  file: string;
  bytes: number;
  /** Input path (relative to the repo) → bytes it contributes to the minified output. */
  inputs: Map<string, number>;
  importMs: number[];
  /** CPU time (user + system, all threads) of the same imports: steadier than wall time on a busy machine. */
  importCpuMs: number[];
  /** Files staged beside the bundle that it loads at run time (not in `bytes`): WebAssembly, data, sidecars. */
  assets: StagedAsset[];
  buildError?: string;
  importError?: string;
}

/**
 * `infra/bundling.ts` as esbuild's build API wants it. The values are used unchanged; only the
 * shape differs: `banner` there is a string (as CDK's NodejsFunction takes it, which passes it as
 * `--banner:js=`), esbuild's API wants `{ js }`; the readonly arrays are copied.
 */
export function esbuildOptions(): BuildOptions {
  const { banner, mainFields, external, ...rest } = bundling;
  return { ...rest, banner: { js: banner }, mainFields: [...mainFields], external: [...external] };
}

/** What every bench build shares: the Lambdas' options, written to disk as `.mjs` beside the sources' root. */
function buildOptions(): BuildOptions {
  return {
    ...esbuildOptions(),
    absWorkingDir: root,
    outExtension: { '.js': '.mjs' },
    metafile: true,
    write: true,
    logLevel: 'silent',
  };
}

/**
 * One script bundled as the Lambdas are (the shared options, its sidecars and worker threads built
 * beside it and staged as CDK stages them) into `outDir`; the bundle's path. For a bench child that
 * should run the product's code as deployed rather than from source through tsx.
 */
export async function bundleScript(entry: string, outDir: string): Promise<string> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const name = entry.replace(/^.*\//, '').replace(/\.ts$/, '');
  await build({
    ...buildOptions(),
    entryPoints: { [name]: join(root, entry), ...sidecarEntryPoints(root) },
    outdir: outDir,
  });
  const file = join(outDir, `${name}.mjs`);
  stageBeside(file, outDir, root, outDir);
  return file;
}

function fromMetafile(
  t: BundleTarget,
  file: string,
  output: Metafile['outputs'][string],
  outDir: string,
): Bundle {
  const inputs = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) inputs.set(input, bytesInOutput);
  const assets = stageBeside(file, dirname(file), root, outDir);
  return { ...t, file, bytes: statSync(file).size, inputs, importMs: [], importCpuMs: [], assets };
}

/** A sidecar built beside the bundles (ADR 0100), and what is in it. */
export interface Sidecar {
  name: string;
  file: string;
  bytes: number;
  inputs: Map<string, number>;
}

/** The sidecars of the last `buildBundles` (by file name), with their metafile inputs. */
export const builtSidecars = new Map<string, Sidecar>();

function recordSidecars(metafile: Metafile | undefined): void {
  for (const [out, o] of Object.entries(metafile?.outputs ?? {})) {
    const file = resolve(root, out);
    if (!file.includes(`/${SIDECAR_DIR}/`)) continue;
    const inputs = new Map<string, number>();
    for (const [input, { bytesInOutput }] of Object.entries(o.inputs)) inputs.set(input, bytesInOutput);
    const name = file.slice(file.lastIndexOf('/') + 1);
    builtSidecars.set(name, { name, file, bytes: o.bytes, inputs });
  }
}

/**
 * Bundles every target with the shared options into `outDir` (`<name>.mjs`). One esbuild run for
 * all; if that fails, one run per entry point, so an entry that does not build is reported
 * (`buildError`) while the others are still measured.
 */
export async function buildBundles(targets: readonly BundleTarget[], outDir: string): Promise<Bundle[]> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const common = buildOptions();
  builtSidecars.clear();
  try {
    const result = await build({
      ...common,
      entryPoints: {
        ...Object.fromEntries(targets.map((t) => [t.name, join(root, t.entry)])),
        ...sidecarEntryPoints(root),
      },
      outdir: outDir,
    });
    recordSidecars(result.metafile);
    const outputs = Object.entries(result.metafile?.outputs ?? {});
    return targets.map((t) => {
      const found = outputs.find(
        ([, o]) => o.entryPoint && resolve(root, o.entryPoint) === join(root, t.entry),
      );
      if (!found) throw new Error(`esbuild produced no output for ${t.entry}`);
      return fromMetafile(t, resolve(root, found[0]), found[1], outDir);
    });
  } catch {
    const sidecarBuild = await build({ ...common, entryPoints: sidecarEntryPoints(root), outdir: outDir });
    recordSidecars(sidecarBuild.metafile);
    return Promise.all(
      targets.map(async (t): Promise<Bundle> => {
        const file = join(outDir, `${t.name}.mjs`);
        try {
          const result = await build({ ...common, entryPoints: [join(root, t.entry)], outfile: file });
          const output = Object.values(result.metafile?.outputs ?? {}).find((o) => o.entryPoint);
          if (!output) throw new Error(`esbuild produced no output for ${t.entry}`);
          return fromMetafile(t, file, output, outDir);
        } catch (error) {
          const message = (error as Error).message.split('\n').slice(0, 4).join(' ');
          return {
            ...t,
            file,
            bytes: 0,
            inputs: new Map(),
            importMs: [],
            importCpuMs: [],
            assets: [],
            buildError: message,
          };
        }
      }),
    );
  }
}

const PROBE =
  'const c0 = process.cpuUsage(); const t0 = performance.now(); await import(process.argv[1]);' +
  " for (const f of process.argv.slice(2)) { if (f.endsWith('.json')) JSON.parse(await (await import('node:fs/promises')).readFile(new URL(f), 'utf8')); else await import(f); }" +
  ' const t1 = performance.now(); const c = process.cpuUsage(c0);' +
  " console.log('BENCH_IMPORT_MS ' + (t1 - t0) + ' ' + (c.user + c.system) / 1000);";

/** Wall and CPU milliseconds of one import (and what it loaded after it). */
export interface ImportTiming {
  wallMs: number;
  cpuMs: number;
}

/**
 * Runs `script` (an ES module given as text) in a fresh `node` with exactly `env` and `args`, and
 * `nodeArgs` as node's own options; resolves with its exit and everything it wrote (stdout and
 * stderr together).
 */
export function runFresh(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  nodeArgs: readonly string[] = [],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', script, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => resolvePromise({ code, signal, out }));
  });
}

/** A clean environment for a fresh `node`: no NODE_OPTIONS (tsx), no compile cache; what a Lambda sets that matters. */
export function lambdaBaseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    AWS_REGION: 'us-east-1',
    TABLE_NAME: 'geoplane',
    NODE_ENV: 'production',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/**
 * Imports `file` in a fresh `node` and returns the milliseconds `await import()` took inside it,
 * wall clock and CPU. `then`: files loaded after it in the same timing, as the first request of a
 * lazy path loads them (sidecars are imported, `.json` files read and parsed); `extraEnv`: e.g.
 * tracing on.
 */
export async function importTime(
  file: string,
  then: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<ImportTiming> {
  const env = { ...lambdaBaseEnv(), ...extraEnv };
  const args = [pathToFileURL(file).href, ...then.map((f) => pathToFileURL(f).href)];
  const { code, signal, out } = await runFresh(PROBE, args, env, 30_000);
  const m = /^BENCH_IMPORT_MS (\S+) (\S+)$/m.exec(out);
  if (code === 0 && m?.[1] && m[2]) return { wallMs: Number(m[1]), cpuMs: Number(m[2]) };
  // Minified source lines in a stack trace say nothing: keep the short lines.
  const said = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && l.length < 400 && l !== '^')
    .slice(0, 6)
    .join(' | ');
  throw new Error(`import of ${file} failed (${signal ?? code}): ${said}`);
}

/**
 * Measures every bundle's import time up to `runs` times, round-robin (one process per import, so
 * a slow moment of the machine spreads over all bundles instead of hitting one). After `budgetMs`
 * no new run starts once 3 are done. Returns the number of complete runs.
 */
export async function measureImports(
  bundles: Bundle[],
  runs: number,
  budgetMs: number,
  progress: (s: string) => void,
): Promise<number> {
  const started = Date.now();
  const first = bundles.find((b) => !b.buildError);
  if (first) await importTime(first.file).catch(() => undefined); // warm the disk cache and the node binary
  let run = 0;
  for (; run < runs; run++) {
    if (run >= 3 && Date.now() - started > budgetMs) break;
    progress(`import times: run ${run + 1}/${runs}`);
    for (let i = 0; i < bundles.length; i++) {
      const b = bundles[(i + run) % bundles.length] as Bundle;
      if (b.importError || b.buildError) continue;
      try {
        const timing = await importTime(b.file);
        b.importMs.push(timing.wallMs);
        b.importCpuMs.push(timing.cpuMs);
      } catch (error) {
        b.importError = (error as Error).message;
      }
    }
  }
  return run;
}

/** `node_modules/@aws-sdk/core/dist-es/x.js` → `@aws-sdk/core`; `shared/http/x.ts` → `shared/http`. */
export function packageOf(input: string): string {
  const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (m?.[1]) return m[1];
  const parts = input.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : input;
}

/** `node_modules/zod/v4/locales/he.js` → `zod/v4/locales`; first-party files keep their folder. */
export function folderOf(input: string): string {
  const path = input.replace(/^(?:.*\/)?node_modules\//, '');
  const parts = path.split('/');
  return parts.length > 1 ? parts.slice(0, -1).join('/') : path;
}

/** Bytes per group (package or folder) of a bundle's inputs. */
export function grouped(bundle: Bundle, by: (input: string) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [input, bytes] of bundle.inputs) out.set(by(input), (out.get(by(input)) ?? 0) + bytes);
  return out;
}

/** Groups whose bytes grew over the floor's, largest growth first. */
export function growthOverFloor(
  bundle: Bundle,
  floor: Bundle,
  by: (input: string) => string,
): { group: string; bytes: number }[] {
  const mine = grouped(bundle, by);
  const base = grouped(floor, by);
  return [...mine]
    .map(([group, bytes]) => ({ group, bytes: bytes - (base.get(group) ?? 0) }))
    .filter((g) => g.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}

// ---- where the bytes go (esbuild metafile) and the lazy paths (ADR 0100) ---------------------------

const KiB = kb;

/**
 * The metafile of chosen bundles against the floor: each one's largest inputs (files) and the
 * packages (or first-party folders) it carries beyond the floor's, so "where do the bytes over the
 * floor go" is answered from esbuild's own accounting rather than guessed.
 */
export function metafileSection(
  floor: Bundle,
  chosen: readonly Bundle[],
  topFiles = 12,
  topGroups = 16,
): string {
  const out: string[] = ['### Where the bytes go: esbuild metafile of the floor, a read and a change', ''];
  const floorGroups = [...grouped(floor, packageOf)].sort((a, b) => b[1] - a[1]);
  out.push(
    `The floor (${KiB(floor.bytes)} KB) by package: ${floorGroups
      .slice(0, 8)
      .map(([g, b]) => `${g} ${KiB(b)}`)
      .join(' · ')}.`,
    '',
  );
  for (const b of chosen) {
    if (b.buildError) continue;
    const over = growthOverFloor(b, floor, packageOf).filter((g) => g.bytes >= 51);
    const sum = over.reduce((a, g) => a + g.bytes, 0);
    const files = [...b.inputs]
      .filter(([input]) => !floor.inputs.has(input))
      .sort((x, y) => y[1] - x[1])
      .slice(0, topFiles);
    out.push(
      `**\`${b.name}\`** (${b.label}): ${KiB(b.bytes)} KB, ${KiB(b.bytes - floor.bytes)} KB over the floor; ` +
        `the packages and folders it adds (${KiB(sum)} KB in all):`,
      '',
      table(
        ['package or folder', 'KB over the floor'],
        over.slice(0, topGroups).map((g) => [`\`${g.group}\``, KiB(g.bytes)]),
        '---|---:',
      ),
      '',
      `Its largest input files not in the floor: ${files.map(([f, n]) => `\`${f.replace(/^node_modules\//, '')}\` ${KiB(n)}`).join(' · ')}.`,
      '',
    );
  }
  return out.join('\n');
}

/** One lazily loaded path: the bundle, what its first request loads beside it, and the cold path measured. */
export interface ColdPath {
  bundle: Bundle;
  /** What the path loads on first use (sidecar or data file names, staged beside the bundle). */
  loads: string[];
  /** Extra environment (tracing on). */
  env?: Record<string, string>;
  /** Files the bundle itself imports on this path (the tracer sidecar where tracing is on). */
  imports?: string[];
  what: string;
  ms: number[];
  cpuMs: number[];
  error?: string;
}

/**
 * Import time plus what the lazy path loads (sidecars imported, data read and parsed) in one fresh
 * process, `runs` times: the cold path of a route whose heavy part is not in its bundle.
 */
export async function measureColdPaths(paths: ColdPath[], runs: number): Promise<void> {
  for (let run = 0; run < runs; run++) {
    for (const p of paths) {
      if (p.error || p.bundle.buildError) continue;
      const dir = dirname(p.bundle.file);
      try {
        const timing = await importTime(
          p.bundle.file,
          p.loads.map((n) => join(dir, n)),
          p.env,
        );
        p.ms.push(timing.wallMs);
        p.cpuMs.push(timing.cpuMs);
      } catch (error) {
        p.error = (error as Error).message;
      }
    }
  }
}

/** The sidecars and data files staged beside bundles, their sizes and the cold paths that load them. */
export function sidecarSection(
  bundles: readonly Bundle[],
  floor: Bundle,
  paths: readonly ColdPath[],
): string {
  const floorMs = median(floor.importMs);
  const floorCpu = median(floor.importCpuMs);
  const users = new Map<string, { bytes: number; kind: string; in: number }>();
  for (const b of bundles) {
    for (const a of b.assets) {
      const cur = users.get(a.name) ?? { bytes: a.bytes, kind: a.kind, in: 0 };
      users.set(a.name, { ...cur, in: cur.in + 1 });
    }
  }
  const rows = [...users].map(([name, u]) => {
    const side = builtSidecars.get(name);
    const top = side
      ? [...grouped({ inputs: side.inputs } as Bundle, packageOf)]
          .sort((x, y) => y[1] - x[1])
          .slice(0, 3)
          .map(([g, n]) => `${g} ${KiB(n)}`)
          .join(' · ')
      : '';
    return [`\`${name}\``, u.kind, KiB(u.bytes), String(u.in), top];
  });
  const coldRows = paths.map((p) => {
    const ms = median(p.ms);
    const loaded = [...p.loads, ...(p.imports ?? [])];
    return [
      `\`${p.bundle.name}\``,
      p.what,
      loaded.map((n) => `\`${n}\``).join(', '),
      KiB(
        p.bundle.bytes +
          loaded.reduce((a, n) => a + (p.bundle.assets.find((x) => x.name === n)?.bytes ?? 0), 0),
      ),
      p.error ? 'ERROR' : ms.toFixed(1),
      p.error ? 'n/a' : `${(ms / floorMs).toFixed(2)}×`,
      p.error ? 'n/a' : `${median(p.cpuMs).toFixed(1)} (${(median(p.cpuMs) / floorCpu).toFixed(2)}×)`,
    ];
  });
  return [
    '### Lazy paths: sidecars and data beside the bundles (ADR 0100)',
    '',
    "Not in any bundle's bytes above: files staged beside the bundles that name them (`infra/bundling.ts` " +
      '`stageBeside`, as CDK stages them), loaded only on the path that needs them.',
    '',
    table(
      ['file', 'kind', 'KB', 'beside how many bundles', 'largest packages (KB)'],
      rows,
      '---|---|---:|---:|---',
    ),
    '',
    'Cold paths measured separately: a fresh `node` imports the bundle and then what the path loads ' +
      '(sidecars imported, the OpenAPI document read and parsed), timed together; the median of the runs. ' +
      'The first request itself (DynamoDB, PostGIS) is not included here: the cold requests below include it.',
    '',
    table(
      ['bundle', 'path', 'loads', 'KB loaded', 'import + lazy load ms', '× floor import', 'CPU ms (× floor)'],
      coldRows,
      '---|---|---|---:|---:|---:|---:',
    ),
    '',
  ].join('\n');
}

/**
 * The cold paths worth measuring: tracing on (Lambda's default, ADR 0092) for `typical`, and for
 * every other sidecar or data file the smallest bundle that loads it (the route it is for), with
 * everything else that bundle loads on first use.
 */
export function coldPathsOf(bundles: readonly Bundle[], typical: Bundle | undefined): ColdPath[] {
  const paths: ColdPath[] = [];
  const tracer = 'tracer.sidecar.mjs';
  if (typical?.assets.some((a) => a.name === tracer))
    paths.push({
      bundle: typical,
      loads: [],
      imports: [tracer],
      env: { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' },
      what: 'tracing on (AWS_EXECUTION_ENV set): the init phase imports the tracer sidecar',
      ms: [],
      cpuMs: [],
    });
  const seen = new Set<string>([tracer]);
  for (const b of [...bundles].sort((x, y) => x.bytes - y.bytes)) {
    if (!b.assets.some((a) => !seen.has(a.name) && a.kind !== 'wasm')) continue;
    // Everything this route's first use loads, together (the PostGIS routes: the driver and the parser).
    const lazy = b.assets.filter((a) => a.kind !== 'wasm' && a.name !== tracer);
    for (const a of lazy) seen.add(a.name);
    paths.push({
      bundle: b,
      loads: lazy.map((a) => a.name),
      what: `first use ${lazy.map((a) => (a.kind === 'data' ? `reads \`${a.name}\`` : `imports \`${a.name}\``)).join(', ')}`,
      ms: [],
      cpuMs: [],
    });
  }
  return paths;
}
