import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * esbuild options shared by CDK (NodejsFunction bundling) and `npm run bench`, so the bundle
 * sizes the benchmark reports are the ones deployed (DESIGN §2).
 */
export const bundling = {
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  bundle: true,
  sourcemap: false,
  // ESM entry points first: smaller bundles (e.g. the DynamoDB document client).
  mainFields: ['module', 'main'],
  // Everything is bundled: no externalModules, so the measured size is the real size.
  external: [] as string[],
  // ESM bundles still meet CommonJS dependencies that call require().
  // (libpg-query's loader also needs __filename/__dirname to find its .wasm beside the bundle.)
  banner:
    "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; " +
    "import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); " +
    'const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);',
  legalComments: 'none',
  // Marks the code as bundled (ADR 0100): a module whose one-path dependency ships as a sidecar
  // loads the sidecar from beside the bundle instead of the package (esbuild drops the other branch).
  define: { GEOPLANE_BUNDLE: 'true' },
} as const;

/**
 * WebAssembly files dependencies load from beside the bundle: staged next to every bundle that
 * names the file (CDK in `infra/constructs/function-bundles.ts`, the bench in `bench/bundles.ts`).
 * libpg-query (the SQL guard) loads its at import; node-sqlite3-wasm (GeoPackage imports) when
 * the GeoPackage reader first opens a file.
 */
export const wasmAssets: readonly { name: string; source: string }[] = [
  { name: 'libpg-query.wasm', source: 'node_modules/libpg-query/wasm/libpg-query.wasm' },
  { name: 'node-sqlite3-wasm.wasm', source: 'node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm' },
];

/** A file a bundle reads from beside it: data or WebAssembly (staged when the bundle names it). */
export interface FileAsset {
  name: string;
  /** Relative to the repository root. */
  source: string;
}

/**
 * Data files read from beside the bundle on the path that needs them (ADR 0100): getOpenAPI's
 * document, so the bundle doesn't inline 250 KB of JSON.
 */
export const dataAssets: readonly FileAsset[] = [
  { name: 'openapi.document.json', source: 'docs/openapi.json' },
];

/**
 * Sidecars (ADR 0100): a one-path dependency built as its own ES module in the same esbuild run as
 * the functions, with the same options, and staged beside every bundle that names it. The module
 * that needs it imports the package when run from source and `./<name>` beside the bundle when
 * bundled (`GEOPLANE_BUNDLE`), on its path only: the bundle neither carries nor evaluates it.
 * One exception is loaded at init instead: libpg-query's, which `sql-guard.ts` imports when it
 * loads, so its WebAssembly compiles during a Lambda's init phase (issue #27, ADR 0100's update).
 * Only third-party code goes in a sidecar (no module of this project, so no class is loaded twice).
 */
export const sidecars: readonly { name: string; entry: string }[] = [
  { name: 'tracer.sidecar.mjs', entry: 'shared/telemetry/tracer-sidecar.ts' },
  { name: 'libpg-query.sidecar.mjs', entry: 'shared/datasources/libpg-query-sidecar.ts' },
  { name: 'pg.sidecar.mjs', entry: 'shared/datasources/pg-sidecar.ts' },
  { name: 'geotiff.sidecar.mjs', entry: 'shared/datasources/geotiff-sidecar.ts' },
  { name: 's3-rasters.sidecar.mjs', entry: 'shared/datasources/s3-rasters-sidecar.ts' },
  { name: 'kms.sidecar.mjs', entry: 'shared/datasources/kms-sidecar.ts' },
  { name: 'style-spec.sidecar.mjs', entry: 'shared/domain/style-spec-sidecar.ts' },
  { name: 'api-gateway.sidecar.mjs', entry: 'shared/platform/api-gateway-sidecar.ts' },
];

/**
 * Worker threads (ADR 0107): a module of this project run in a `worker_threads` Worker, built as its
 * own entry in the same run as the sidecars, with the same options, and staged beside every bundle
 * that names it. Unlike a sidecar it is project code: it runs in an isolate of its own, so no class
 * is loaded twice into one realm; what it produces reaches the bundle as messages.
 */
export const workers: readonly { name: string; entry: string }[] = [
  { name: 'format-reader.worker.mjs', entry: 'shared/datasources/imports/formats/reader-worker.ts' },
];

/** The folder of the build output the sidecars and workers are written to (`<outdir>/_sidecars/<name>`). */
export const SIDECAR_DIR = '_sidecars';

/** esbuild entry points of the sidecars and workers, keyed by their output name under the outdir. */
export function sidecarEntryPoints(root: string): Record<string, string> {
  return Object.fromEntries(
    [...sidecars, ...workers].map((s) => [
      `${SIDECAR_DIR}/${s.name.replace(/\.mjs$/, '')}`,
      join(root, s.entry),
    ]),
  );
}

/** What was staged beside one bundle. */
export interface StagedAsset {
  name: string;
  bytes: number;
  kind: 'wasm' | 'data' | 'sidecar' | 'worker';
}

/**
 * Copies into `dir` every file the bundle `file` names: its WebAssembly, data files, sidecars and
 * workers, and, in turn, what each sidecar or worker names. `outDir` is the esbuild outdir the sidecars were built
 * into. CDK (`infra/constructs/function-bundles.ts`), the benchmark and the bundle tests all stage
 * with this, so what they load is what is deployed.
 */
export function stageBeside(file: string, dir: string, root: string, outDir: string): StagedAsset[] {
  const staged = new Map<string, StagedAsset>();
  const visit = (text: string) => {
    const packaged = [
      ...wasmAssets.map((a) => ({ ...a, kind: 'wasm' as const })),
      ...dataAssets.map((a) => ({ ...a, kind: 'data' as const })),
    ];
    for (const asset of packaged) {
      if (staged.has(asset.name) || !text.includes(asset.name)) continue;
      const source = join(root, asset.source);
      copyFileSync(source, join(dir, asset.name));
      staged.set(asset.name, { name: asset.name, bytes: statSync(source).size, kind: asset.kind });
    }
    const built = [
      ...sidecars.map((s) => ({ ...s, kind: 'sidecar' as const })),
      ...workers.map((w) => ({ ...w, kind: 'worker' as const })),
    ];
    for (const module of built) {
      if (staged.has(module.name) || !text.includes(module.name)) continue;
      const file = join(outDir, SIDECAR_DIR, module.name);
      if (!existsSync(file)) throw new Error(`${module.kind} ${module.name} was not built into ${outDir}`);
      copyFileSync(file, join(dir, module.name));
      staged.set(module.name, { name: module.name, bytes: statSync(file).size, kind: module.kind });
      visit(readFileSync(file, 'utf8'));
    }
  };
  visit(readFileSync(file, 'utf8'));
  return [...staged.values()];
}
