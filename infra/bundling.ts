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
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  legalComments: 'none',
} as const;
