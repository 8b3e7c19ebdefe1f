import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { bundling, wasmAssets } from '../infra/bundling.ts';

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
  /** Files staged beside the bundle that it loads at run time (not in `bytes`). */
  assets: { name: string; bytes: number }[];
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

function fromMetafile(t: BundleTarget, file: string, output: Metafile['outputs'][string]): Bundle {
  const inputs = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) inputs.set(input, bytesInOutput);
  return stageAssets({ ...t, file, bytes: statSync(file).size, inputs, importMs: [], assets: [] });
}

/**
 * WebAssembly a dependency loads from beside the bundle (libpg-query, node-sqlite3-wasm): staged
 * exactly as `infra/constructs/function-bundles.ts` stages it for CDK (when the bundle names it).
 */
function stageAssets(bundle: Bundle): Bundle {
  const text = readFileSync(bundle.file, 'utf8');
  const assets: Bundle['assets'] = [];
  for (const asset of wasmAssets) {
    if (!text.includes(asset.name)) continue;
    const source = join(root, asset.source);
    copyFileSync(source, join(dirname(bundle.file), asset.name));
    assets.push({ name: asset.name, bytes: statSync(source).size });
  }
  return { ...bundle, assets };
}

/**
 * Bundles every target with the shared options into `outDir` (`<name>.mjs`). One esbuild run for
 * all; if that fails, one run per entry point, so an entry that does not build is reported
 * (`buildError`) while the others are still measured.
 */
export async function buildBundles(targets: readonly BundleTarget[], outDir: string): Promise<Bundle[]> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const common: BuildOptions = {
    ...esbuildOptions(),
    absWorkingDir: root,
    outExtension: { '.js': '.mjs' },
    metafile: true,
    write: true,
    logLevel: 'silent',
  };
  try {
    const result = await build({
      ...common,
      entryPoints: Object.fromEntries(targets.map((t) => [t.name, join(root, t.entry)])),
      outdir: outDir,
    });
    const outputs = Object.entries(result.metafile?.outputs ?? {});
    return targets.map((t) => {
      const found = outputs.find(
        ([, o]) => o.entryPoint && resolve(root, o.entryPoint) === join(root, t.entry),
      );
      if (!found) throw new Error(`esbuild produced no output for ${t.entry}`);
      return fromMetafile(t, resolve(root, found[0]), found[1]);
    });
  } catch {
    return Promise.all(
      targets.map(async (t): Promise<Bundle> => {
        const file = join(outDir, `${t.name}.mjs`);
        try {
          const result = await build({ ...common, entryPoints: [join(root, t.entry)], outfile: file });
          const output = Object.values(result.metafile?.outputs ?? {}).find((o) => o.entryPoint);
          if (!output) throw new Error(`esbuild produced no output for ${t.entry}`);
          return fromMetafile(t, file, output);
        } catch (error) {
          const message = (error as Error).message.split('\n').slice(0, 4).join(' ');
          return { ...t, file, bytes: 0, inputs: new Map(), importMs: [], assets: [], buildError: message };
        }
      }),
    );
  }
}

const PROBE =
  'const t0 = performance.now(); await import(process.argv[1]); const t1 = performance.now();' +
  " console.log('BENCH_IMPORT_MS ' + (t1 - t0));";

/** Imports `file` in a fresh `node` and returns the milliseconds `await import()` took inside it. */
export function importTime(file: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    // A clean environment: no NODE_OPTIONS (tsx), no compile cache; what a Lambda sets that matters.
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'geoplane',
      NODE_ENV: 'production',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE, pathToFileURL(file).href], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const m = /^BENCH_IMPORT_MS (\S+)$/m.exec(out);
      if (code === 0 && m?.[1]) resolvePromise(Number(m[1]));
      else {
        // Minified source lines in a stack trace say nothing: keep the short lines.
        const said = out
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l && l.length < 400 && l !== '^')
          .slice(0, 6)
          .join(' | ');
        reject(new Error(`import of ${file} failed (${signal ?? code}): ${said}`));
      }
    });
  });
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
        b.importMs.push(await importTime(b.file));
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
