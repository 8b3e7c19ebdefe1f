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
