import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltBundles, buildBundles } from '../support/bundles.ts';

// The mosaic functions in one esbuild run with the deployed options (ADR 0017): geotiff and the S3
// client must bundle as ESM and load, and only the harvest loads the GeoTIFF parser (ADR 0060), from
// its sidecar (ADR 0100).
const entries = [
  'functions/mosaics/harvest-mosaic-granules.ts',
  'functions/mosaics/delete-mosaic-granule.ts',
  'functions/mosaics/list-mosaic-granules.ts',
];
let built: BuiltBundles;
const bundle = (entry: string) => built.bundle(entry);

describe('mosaic function bundles', () => {
  beforeAll(() => {
    built = buildBundles(entries);
  }, 60_000);
  afterAll(() => built.remove());

  it.each(entries)('%s bundles and exports its handler', async (entry) => {
    const module = (await import(pathToFileURL(bundle(entry)).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
  });

  it('keeps the GeoTIFF parser out of every bundle: only the harvest stages its sidecar, which loads', async () => {
    const [harvestEntry, removeEntry, listEntry] = entries as [string, string, string];
    expect(built.staged(harvestEntry)).toContain('geotiff.sidecar.mjs');
    expect(built.staged(removeEntry)).not.toContain('geotiff.sidecar.mjs');
    expect(built.staged(listEntry)).not.toContain('geotiff.sidecar.mjs');
    const sidecar = join(dirname(bundle(harvestEntry)), 'geotiff.sidecar.mjs');
    expect(statSync(sidecar).size).toBeGreaterThan(200 * 1024);
    const loaded = (await import(pathToFileURL(sidecar).href)) as { GeoTIFF?: { fromSource?: unknown } };
    expect(typeof loaded.GeoTIFF?.fromSource).toBe('function');
    // An s3:// root is read through the S3 client's sidecar (ADR 0153), staged beside the harvest.
    expect(built.staged(harvestEntry)).toContain('s3-rasters.sidecar.mjs');
    const s3 = (await import(
      pathToFileURL(join(dirname(bundle(harvestEntry)), 's3-rasters.sidecar.mjs')).href
    )) as {
      S3Client?: unknown;
      GetObjectCommand?: unknown;
      ListObjectsV2Command?: unknown;
    };
    expect([typeof s3.S3Client, typeof s3.GetObjectCommand, typeof s3.ListObjectsV2Command]).toEqual([
      'function',
      'function',
      'function',
    ]);
    const harvest = statSync(bundle(harvestEntry)).size;
    const remove = statSync(bundle(removeEntry)).size;
    expect(harvest).toBeLessThan(800 * 1024);
    // A change's bundle also carries the idempotency records, the audit trail and the KMS client a
    // read's doesn't (~60 KB, ADR 0094); beyond that the delete is no bigger than the read.
    expect(Math.abs(remove - statSync(bundle(entries[2] as string)).size)).toBeLessThan(80 * 1024);
  });
});
