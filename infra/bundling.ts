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
