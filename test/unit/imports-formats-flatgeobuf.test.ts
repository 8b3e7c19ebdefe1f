import { geojson } from 'flatgeobuf';
import type { FeatureCollection } from 'geojson';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { collect, expectInputError, point, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const fgb = (features: unknown[], crs = 4326) =>
  geojson.serialize({ type: 'FeatureCollection', features } as FeatureCollection, crs);

describe('FlatGeobuf', () => {
  const features = Array.from({ length: 25 }, (_, i) =>
    point(i, i / 2, { name: `p${i}`, n: i, x: i + 0.5, ok: i % 2 === 0 }),
  );
  const path = tmp.file('points.fgb', fgb(features));

  it('discovers header columns, geometry type, SRID from the header crs, count and bbox', async () => {
    expect(await sniffFormat(path, 'points.fgb')).toBe('flatgeobuf');
    const discovery = await discover(path, 'points.fgb');
    expect(discovery.layers[0]).toMatchObject({
      name: 'points',
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 25,
      bbox: [0, 0, 24, 12],
      fields: [
        { name: 'name', type: 'text' },
        { name: 'n', type: 'double precision' },
        { name: 'x', type: 'double precision' },
        { name: 'ok', type: 'boolean' },
      ],
    });
  });

  it('reads features as GeoJSON geometries in order; skip resumes exactly', async () => {
    const all = await collect(readFeatures(path, 'points.fgb', 'points'));
    expect(all).toHaveLength(25);
    expect(all[3]).toEqual({
      properties: { name: 'p3', n: 3, x: 3.5, ok: false },
      geometry: { type: 'Point', coordinates: [3, 1.5] },
    });
    expect(await collect(readFeatures(path, 'points.fgb', 'points', { skip: 20 }))).toEqual(all.slice(20));
  });

  it('takes another CRS code from the header without a range check', async () => {
    const merc = tmp.file('merc.fgb', fgb([point(1e6, 6e6)], 3857));
    expect((await discover(merc, 'merc.fgb')).layers[0]).toMatchObject({
      srid: 3857,
      bbox: [1e6, 6e6, 1e6, 6e6],
    });
  });

  it('refuses a truncated file, naming the feature, and out-of-range coordinates for 4326', async () => {
    const bytes = fgb(features);
    const cut = tmp.file('cut.fgb', bytes.subarray(0, bytes.length - 30));
    await expectInputError(() => discover(cut, 'cut.fgb'), 'truncated_file', /feature 24\b/);
    await expectInputError(
      () => collect(readFeatures(cut, 'cut.fgb', 'cut')),
      'truncated_file',
      /feature 24\b/,
    );
    const header = tmp.file('header.fgb', bytes.subarray(0, 20));
    await expectInputError(() => discover(header, 'header.fgb'), 'truncated_file', /header/);
    const far = tmp.file('far.fgb', fgb([point(0, 0), point(500, 0)]));
    await expectInputError(() => discover(far, 'far.fgb'), 'coordinates_out_of_range', /[Ff]eature 1\b.*500/);
  });
});
