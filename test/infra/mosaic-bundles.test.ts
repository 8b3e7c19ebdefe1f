import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryRoot } from '../../infra/constructs/api-function.ts';
import { esbuildOptions } from '../../infra/constructs/function-bundles.ts';

// The mosaic functions in one esbuild run with the deployed options (ADR 0017): geotiff and the S3
// client must bundle as ESM and load, and only the harvest carries the GeoTIFF parser (ADR 0060).
const entries = [
  'functions/mosaics/harvest-mosaic-granules.ts',
  'functions/mosaics/delete-mosaic-granule.ts',
  'functions/mosaics/list-mosaic-granules.ts',
];
const out = mkdtempSync(join(tmpdir(), 'geoplane-mosaic-bundles-'));
const bundle = (entry: string) => join(out, entry.replace(/\.ts$/, '.mjs'));

describe('mosaic function bundles', () => {
  beforeAll(() => {
    buildSync({
      ...esbuildOptions(),
      absWorkingDir: repositoryRoot,
      entryPoints: Object.fromEntries(entries.map((e) => [e.replace(/\.ts$/, ''), join(repositoryRoot, e)])),
      outdir: out,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(entries)('%s bundles and exports its handler', async (entry) => {
    const module = (await import(pathToFileURL(bundle(entry)).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
  });

  it('keeps the GeoTIFF parser out of the read and delete functions', () => {
    const harvest = statSync(bundle(entries[0] as string)).size;
    const remove = statSync(bundle(entries[1] as string)).size;
    expect(harvest).toBeLessThan(1.2 * 1024 * 1024);
    expect(harvest - remove).toBeGreaterThan(200 * 1024);
    // A change's bundle also carries the idempotency records, the audit trail and the KMS client a
    // read's doesn't (~60 KB, ADR 0094); beyond that the delete is no bigger than the read.
    expect(Math.abs(remove - statSync(bundle(entries[2] as string)).size)).toBeLessThan(80 * 1024);
  });
});
