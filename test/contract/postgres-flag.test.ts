import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataRoutes } from '#api/data-routes.ts';
import { routes } from '#api/routes.ts';
import { appEntries } from '#infra/stacks/geoplane-stack.ts';
import { importTaskAccess, importTaskHandlers } from '#infra/workflows/import-workflow.ts';
import { tileCacheWorkflow } from '#infra/workflows/tile-cache-workflow.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Every Lambda entry point of the app, as GeoPlaneStack bundles them. */
const entries = appEntries(routes);

/**
 * The entry points that declare PostgreSQL connections (ADR 0112): routes flagged `postgres`, and
 * import and tile cache tasks whose access says so. These are the functions cdk.json `vpc` places in the VPC.
 */
const declared = [
  ...new Set([...routes, ...dataRoutes].filter((op) => op.postgres).map((op) => op.handler)),
  ...Object.entries(importTaskHandlers)
    .filter(([task]) => importTaskAccess[task as keyof typeof importTaskHandlers].postgres)
    .map(([, handler]) => handler),
  ...Object.entries(tileCacheWorkflow.handlers)
    .filter(([task]) => tileCacheWorkflow.access[task as keyof typeof tileCacheWorkflow.handlers].postgres)
    .map(([, handler]) => handler),
];

describe('route table `postgres` ↔ the handlers that load the PostgreSQL driver (ADR 0112)', () => {
  /** The entry points whose bundle imports `pg` (statically or on first use, `loadPg`). */
  let loadingPg: string[];

  beforeAll(async () => {
    // One esbuild run over every entry, packages left external: an output that still imports
    // `pg` is a function that can open a PostgreSQL connection (tree shaking drops unused paths).
    const result = await build({
      absWorkingDir: root,
      entryPoints: Object.fromEntries(entries.map((entry) => [entry.replace(/\.ts$/, ''), entry])),
      bundle: true,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      write: false,
      metafile: true,
      outdir: 'out',
      logLevel: 'silent',
    });
    loadingPg = Object.values(result.metafile.outputs)
      .filter((output) => output.imports.some((i) => i.path === 'pg' || i.path.startsWith('pg/')))
      .map((output) => output.entryPoint as string)
      .sort();
  }, 120_000);

  it('bundles every entry point of the app', () => {
    expect(entries.length).toBeGreaterThan(90);
  });

  it('flags exactly the handlers that load pg: no PostgreSQL function left outside the VPC, no other inside', () => {
    expect(loadingPg.length).toBeGreaterThan(0);
    expect([...declared].sort()).toEqual(loadingPg);
  });

  it('flags no route that shares a handler with an unflagged one', () => {
    const flagged = new Set(declared);
    for (const op of [...routes, ...dataRoutes])
      expect(Boolean(op.postgres), op.operationId).toBe(flagged.has(op.handler));
  });
});
