import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Formats from '#datasources/imports/formats/index.ts';
import type { StagedAsset } from '#infra/bundling.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { writeGeoPackage } from '../fixtures/imports/generate.ts';
import { type BuiltBundles, buildBundles } from '../support/bundles.ts';

/**
 * The format readers as the Lambda bundles carry them (ADR 0107): the readers' client in the
 * bundle, the worker built and staged beside it (with SQLite's WebAssembly, which only the worker
 * names), started from the bundle's folder and answering as from source.
 */
const files = mkdtempSync(join(tmpdir(), 'geoplane-reader-bundle-files-'));
let built: BuiltBundles;
let bundle: string;
let staged: StagedAsset[] = [];

describe('format readers bundled with their worker', () => {
  beforeAll(() => {
    built = buildBundles([], {
      formats: join(repositoryRoot, 'shared/datasources/imports/formats/index.ts'),
    });
    bundle = built.bundle('formats');
    staged = built.assets('formats');
  }, 120_000);
  afterAll(() => {
    built.remove();
    rmSync(files, { recursive: true, force: true });
  });

  it('stages the worker and, through it, SQLite; the bundle itself carries no reader', () => {
    expect(staged).toContainEqual(
      expect.objectContaining({ name: 'format-reader.worker.mjs', kind: 'worker' }),
    );
    expect(staged).toContainEqual(expect.objectContaining({ name: 'node-sqlite3-wasm.wasm', kind: 'wasm' }));
    const code = readFileSync(bundle, 'utf8');
    expect(code).not.toContain('node-sqlite3-wasm.wasm');
    expect(code).not.toContain('SQLite format 3');
  });

  it('discovers and reads a GeoJSON file and a GeoPackage in the bundled worker', async () => {
    const formats = (await import(pathToFileURL(bundle).href)) as typeof Formats;
    const geojson = join(files, 'one.geojson');
    writeFileSync(
      geojson,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          { type: 'Feature', properties: { a: 1 }, geometry: { type: 'Point', coordinates: [1, 2] } },
        ],
      }),
    );
    expect((await formats.discover(geojson, 'one.geojson')).layers[0]).toMatchObject({
      name: 'one',
      feature_count: 1,
    });
    const gpkg = writeGeoPackage(join(files, 'points.gpkg'), { count: 3 });
    expect((await formats.discover(gpkg, 'points.gpkg')).layers[0]).toMatchObject({
      name: 'points',
      feature_count: 3,
      srid: 4326,
    });
    const features = [];
    for await (const f of formats.readFeatures(gpkg, 'points.gpkg', 'points', { skip: 1 })) features.push(f);
    expect(features.map((f) => f.properties.name)).toEqual(['feature 1', 'feature 2']);
  }, 60_000);
});
