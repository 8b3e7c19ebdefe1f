import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { importTaskHandlers } from '#infra/workflows/import-workflow.ts';
import { type BuiltBundles, buildBundles } from '../support/bundles.ts';

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
let built: BuiltBundles;

describe('import function bundles', () => {
  // Staged as CDK stages it: WebAssembly, data and sidecars (ADR 0100).
  beforeAll(() => {
    built = buildBundles(entries);
  }, 120_000);
  afterAll(() => built.remove());

  it.each(entries)('%s bundles, loads and exports its handler', async (entry) => {
    const module = (await import(pathToFileURL(built.bundle(entry)).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
  });

  it('keeps the format readers and SQLite out of the routes; the step stages SQLite', () => {
    for (const entry of routeEntries)
      expect(built.staged(entry), entry).not.toContain('node-sqlite3-wasm.wasm');
    expect(built.staged(importTaskHandlers.step)).toContain('node-sqlite3-wasm.wasm');
  });
});
