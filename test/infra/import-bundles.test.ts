import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { sidecarEntryPoints, stageBeside } from '#infra/bundling.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { esbuildOptions } from '#infra/constructs/function-bundles.ts';
import { importTaskHandlers } from '#infra/workflows/import-workflow.ts';

/**
 * The import functions in one esbuild run with the deployed options, WebAssembly and sidecars staged
 * beside the bundles that name them as CDK stages them (ADR 0083/0084/0100): every one must load — a module that reads
 * a file at import (node-sqlite3-wasm does) must not be in a bundle without that file — and only
 * the workflow's step carries the format readers.
 */
const routeEntries = routes
  .filter(
    (op) =>
      op.handler.startsWith('functions/imports/') ||
      ['deleteService', 'deleteWorkspace'].includes(op.operationId),
  )
  .map((op) => op.handler);
const taskEntries = Object.values(importTaskHandlers);
const entries = [...routeEntries, ...taskEntries];
const out = mkdtempSync(join(tmpdir(), 'geoplane-import-bundles-'));
const bundle = (entry: string) => join(out, entry.replace(/\.ts$/, '.mjs'));
const staged = new Map<string, string[]>();

describe('import function bundles', () => {
  beforeAll(() => {
    buildSync({
      ...esbuildOptions(),
      absWorkingDir: repositoryRoot,
      entryPoints: {
        ...Object.fromEntries(entries.map((e) => [e.replace(/\.ts$/, ''), join(repositoryRoot, e)])),
        ...sidecarEntryPoints(repositoryRoot),
      },
      outdir: out,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
    for (const entry of entries) {
      // Staged as CDK stages it: WebAssembly, data and sidecars (ADR 0100).
      const assets = stageBeside(bundle(entry), dirname(bundle(entry)), repositoryRoot, out);
      staged.set(
        entry,
        assets.map((a) => a.name),
      );
    }
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(entries)('%s bundles, loads and exports its handler', async (entry) => {
    const module = (await import(pathToFileURL(bundle(entry)).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
  });

  it('keeps the format readers and SQLite out of the routes; the step stages SQLite', () => {
    for (const entry of routeEntries)
      expect(staged.get(entry), entry).not.toContain('node-sqlite3-wasm.wasm');
    expect(staged.get(importTaskHandlers.step)).toContain('node-sqlite3-wasm.wasm');
  });
});
