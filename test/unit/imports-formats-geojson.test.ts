import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { collect, expectInputError, point, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const collection = (features: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'FeatureCollection', ...extra, features }, null, 1);

describe('GeoJSON FeatureCollection', () => {
  const features = [
    point(10, 20, { name: 'a', n: 1, big: 2 ** 40, x: 1.5, ok: true, tags: ['t'], mixed: 1 }),
    point(-5, 45, { name: 'b', n: 2, big: 3, x: 2, ok: false, tags: null, mixed: 'one' }),
    { type: 'Feature', properties: { name: 'c', extra: { k: 1 } }, geometry: null },
    point(30, -10, { name: 'd', n: 4 }),
  ];
  const path = tmp.file('cities.geojson', `\uFEFF${collection(features)}`);

  it('sniffs geojson and discovers one layer with fields, type, srid, count and bbox', async () => {
    // Prepare / Act
    const format = await sniffFormat(path, 'cities.geojson');
    const discovery = await discover(path, 'cities.geojson');
    // Assess
    expect(format).toBe('geojson');
    expect(discovery.format).toBe('geojson');
    expect(discovery.layers).toHaveLength(1);
    const [layer] = discovery.layers;
    expect(layer).toMatchObject({
      name: 'cities',
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 4,
      bbox: [-5, -10, 30, 45],
    });
    expect(layer?.fields).toEqual([
      { name: 'name', type: 'text' },
      { name: 'n', type: 'integer' },
      { name: 'big', type: 'bigint' },
      { name: 'x', type: 'double precision' },
      { name: 'ok', type: 'boolean' },
      { name: 'tags', type: 'jsonb' },
      { name: 'mixed', type: 'text' },
      { name: 'extra', type: 'jsonb' },
    ]);
    expect(discovery.warnings.join('\n')).toMatch(/1 of 4 features have no geometry/);
    expect(discovery.size_bytes).toBeGreaterThan(100);
  });

  it('reads the features in order and resumes exactly with skip', async () => {
    const all = await collect(readFeatures(path, 'cities.geojson', 'cities'));
    const rest = await collect(readFeatures(path, 'cities.geojson', 'cities', { skip: 2 }));
    expect(all.map((f) => f.properties.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(all[0]?.geometry).toEqual({ type: 'Point', coordinates: [10, 20] });
    expect(all[2]?.geometry).toBeNull();
    expect(rest).toEqual(all.slice(2));
  });

  it('reads text in any script as written, beside ASCII features in the same chunk, points and packed polygons alike', async () => {
    // Prepare: mostly ASCII features (read as Latin-1, which equals UTF-8 on ASCII) and a few whose
    // names are not ASCII, right before the geometry whose coordinates are packed from the bytes
    const names = ['Zürich', '東京', 'São Paulo', 'smile 🙂', 'Ωmega"quoted"'];
    const nameOf = (i: number) =>
      i % 10 === 3 ? (names[Math.floor(i / 10) % names.length] as string) : `plain ${i}`;
    const square = (i: number) => [
      [
        [i, 0],
        [i + 0.5, 0],
        [i + 0.5, 0.5],
        [i, 0.5],
        [i, 0],
      ],
    ];
    const files = {
      points: Array.from({ length: 60 }, (_, i) => point(i, i / 2, { name: nameOf(i), i })),
      squares: Array.from({ length: 60 }, (_, i) => ({
        type: 'Feature',
        properties: { name: nameOf(i), i },
        geometry: { type: 'Polygon', coordinates: square(i) },
      })),
    };
    for (const [name, features] of Object.entries(files)) {
      const path = tmp.file(`${name}-scripts.geojson`, collection(features));

      // Act
      const read = await collect(readFeatures(path, `${name}-scripts.geojson`, `${name}-scripts`));

      // Assess
      expect(read.map((f) => f.properties.name)).toEqual(features.map((f) => f.properties.name));
      expect(read.filter((f) => !String(f.properties.name).startsWith('plain'))).toHaveLength(6);
      if (name === 'squares') expect(read[33]?.geometry).toMatchObject({ type: 'Polygon' });
      const geometry = read[33]?.geometry as { coordinates: unknown };
      const coordinates =
        typeof (geometry.coordinates as { unpack?: unknown }).unpack === 'function'
          ? (geometry.coordinates as { unpack: () => unknown }).unpack()
          : geometry.coordinates;
      expect(coordinates).toEqual(name === 'squares' ? square(33) : [33, 16.5]);
    }
  });

  it('resumes by position: from where the last feature read ended, without reading the features before (ADR 0143)', async () => {
    // Prepare: the same features as a FeatureCollection and as a bare array
    const many = Array.from({ length: 50 }, (_, i) => point(i, i / 2, { i }));
    for (const [name, text] of [
      ['many', collection(many)],
      ['bare', JSON.stringify(many, null, 1)],
    ] as const) {
      const path = tmp.file(`${name}.geojson`, text);
      const all = await collect(readFeatures(path, `${name}.geojson`, name));
      const first = all[0]?.end as number;
      const at = all[19]?.end as number;
      // The bytes of features 1–19 broken: a reader that read them again would fail.
      const broken = Buffer.from(text);
      broken.fill(0x78, first + 3, at - 3);
      const brokenPath = tmp.file(`${name}-broken.geojson`, broken);

      // Act
      const resumed = await collect(
        readFeatures(brokenPath, `${name}-broken.geojson`, `${name}-broken`, { skip: 20, offset: at }),
      );

      // Assess
      expect(all).toHaveLength(50);
      expect(all.every((f, i) => i === 0 || (f.end as number) > (all[i - 1]?.end as number))).toBe(true);
      expect(resumed).toEqual(all.slice(20));
      await expectInputError(
        () => collect(readFeatures(brokenPath, `${name}-broken.geojson`, `${name}-broken`)),
        'malformed_json',
        /feature 1\b/,
      );
    }
  });

  it('reports bytes consumed monotonically', async () => {
    const seen: number[] = [];
    await collect(readFeatures(path, 'cities.geojson', 'cities', { onBytes: (b) => seen.push(b) }));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toBeGreaterThan(100);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('takes the SRID of a legacy crs member (before or after the features) and skips the range check', async () => {
    const crs = { type: 'name', properties: { name: 'urn:ogc:def:crs:EPSG::3857' } };
    const after = tmp.file(
      'merc.geojson',
      JSON.stringify({ type: 'FeatureCollection', features: [point(1e6, 5e6)], crs }),
    );
    const before = tmp.file(
      'merc2.geojson',
      collection([point(1e6, 5e6)], { crs: { type: 'name', properties: { name: 'EPSG:2056' } } }),
    );
    expect((await discover(after, 'merc.geojson')).layers[0]?.srid).toBe(3857);
    expect((await discover(before, 'merc2.geojson')).layers[0]?.srid).toBe(2056);
  });

  it('promotes singles and multis of one family to Multi* with a warning', async () => {
    const multi = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      },
    };
    const path2 = tmp.file('mp.geojson', collection([point(0, 0), multi]));
    const discovery = await discover(path2, 'mp.geojson');
    expect(discovery.layers[0]?.geometry_type).toBe('MultiPoint');
    expect(discovery.warnings.join('\n')).toMatch(/Point and MultiPoint.*MultiPoint/);
  });

  it('supports a single Feature and a bare geometry', async () => {
    const single = tmp.file('one.geojson', JSON.stringify(point(1, 2, { a: 'x' })));
    const bare = tmp.file(
      'bare.json',
      JSON.stringify({
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      }),
    );
    expect((await discover(single, 'one.geojson')).layers[0]).toMatchObject({
      feature_count: 1,
      geometry_type: 'Point',
    });
    expect(await collect(readFeatures(bare, 'bare.json', 'bare'))).toEqual([
      {
        properties: {},
        geometry: {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
      },
    ]);
  });
});

describe('GeoJSON bad input', () => {
  it('names the feature index of malformed JSON mid-file', async () => {
    const good = collection([point(0, 0), point(1, 1), point(2, 2)]);
    const broken = good.replace(/"coordinates": \[\s*2,/, '"coordinates": [ 2,,');
    const path = tmp.file('broken.geojson', broken);
    await expectInputError(() => discover(path, 'broken.geojson'), 'malformed_json', /feature 2\b/);
    await expectInputError(
      () => collect(readFeatures(path, 'broken.geojson', 'broken')),
      'malformed_json',
      /feature 2\b/,
    );
  });

  it('reports a file cut short', async () => {
    const path = tmp.file('cut.geojson', collection([point(0, 0), point(1, 1)]).slice(0, -20));
    await expectInputError(() => discover(path, 'cut.geojson'), 'malformed_json', /feature 1\b/);
  });

  it('refuses empty files, whitespace and empty collections', async () => {
    await expectInputError(() => discover(tmp.file('e.geojson', ''), 'e.geojson'), 'empty_file', /empty/);
    await expectInputError(
      () => discover(tmp.file('w.geojson', ' \n\t '), 'w.geojson'),
      'empty_file',
      /whitespace/,
    );
    await expectInputError(
      () => discover(tmp.file('z.geojson', collection([])), 'z.geojson'),
      'no_features',
      /no features/,
    );
  });

  it('refuses mixed geometry families naming both types and the first differing index', async () => {
    const poly = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    };
    const path = tmp.file('mixed.geojson', collection([point(0, 0), point(1, 1), poly]));
    await expectInputError(
      () => discover(path, 'mixed.geojson'),
      'mixed_geometry_types',
      /Point.*feature 0.*Polygon.*feature 2/,
    );
  });

  it('refuses coordinates outside lon/lat range, naming the feature and value', async () => {
    const path = tmp.file('merc.geojson', collection([point(1, 1), point(1113194.9, 1)]));
    const error = await expectInputError(
      () => discover(path, 'merc.geojson'),
      'coordinates_out_of_range',
      /[Ff]eature 1\b.*1113194\.9/,
    );
    expect(error.message).toMatch(/reproject it, or declare its CRS/);
  });

  it('names the feature with bytes that are not UTF-8', async () => {
    const text = collection([point(0, 0, { n: 'ok' }), point(1, 1, { n: 'XX' })]);
    const bytes = Buffer.from(text, 'utf8');
    const at = bytes.lastIndexOf(Buffer.from('XX'));
    bytes[at] = 0xe9; // latin-1 é
    const path = tmp.file('latin.geojson', bytes);
    await expectInputError(() => discover(path, 'latin.geojson'), 'invalid_utf8', /feature 1\b/);
  });

  it('refuses a feature over the size limit', async () => {
    const path = tmp.file('big.geojson', collection([point(0, 0), point(1, 1, { s: 'x'.repeat(5000) })]));
    await expectInputError(
      () => collect(readFeatures(path, 'big.geojson', 'big', { limits: { maxFeatureBytes: 4096 } })),
      'feature_too_large',
      /feature 1\b.*4096/,
    );
  });

  it('refuses items that are not Features and invalid geometries', async () => {
    const notFeature = tmp.file(
      'nf.geojson',
      collection([point(0, 0), { type: 'Point', coordinates: [1, 2] }]),
    );
    await expectInputError(() => discover(notFeature, 'nf.geojson'), 'invalid_feature', /Feature 1\b/);
    const badGeom = tmp.file(
      'bg.geojson',
      collection([{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: ['a', 1] } }]),
    );
    await expectInputError(() => discover(badGeom, 'bg.geojson'), 'invalid_geometry', /feature 0\b/);
  });

  it('sniffs VRT, HTML, PDF and XML named .geojson as unsupported, saying what they look like', async () => {
    const vrt = tmp.file('v.geojson', '<OGRVRTDataSource><OGRVRTLayer name="x"/></OGRVRTDataSource>');
    await expectInputError(() => sniffFormat(vrt, 'v.geojson'), 'unsupported_format', /virtual data source/);
    await expectInputError(
      () => discover(tmp.file('h.geojson', '<!DOCTYPE html><html></html>'), 'h.geojson'),
      'unsupported_format',
      /HTML/,
    );
    await expectInputError(
      () => sniffFormat(tmp.file('p.geojson', '%PDF-1.4\n'), 'p.geojson'),
      'unsupported_format',
      /PDF/,
    );
    await expectInputError(
      () => sniffFormat(tmp.file('x.csv', '<?xml version="1.0"?><a/>'), 'x.csv'),
      'unsupported_format',
      /XML/,
    );
  });

  it('refuses a layer name the file does not have', async () => {
    const path = tmp.file('one.geojson', collection([point(0, 0)]));
    await expectInputError(
      () => collect(readFeatures(path, 'one.geojson', 'other')),
      'unknown_layer',
      /other/,
    );
  });
});

describe('aborting', () => {
  it('stops with the AbortError of the signal, not an ImportInputError', async () => {
    const path = tmp.file('abort.geojson', collection([point(0, 0), point(1, 1), point(2, 2)]));
    const controller = new AbortController();
    const seen: unknown[] = [];
    let caught: unknown;
    try {
      for await (const f of readFeatures(path, 'abort.geojson', 'abort', { signal: controller.signal })) {
        seen.push(f);
        controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(seen).toHaveLength(1);
    expect((caught as Error).name).toBe('AbortError');
  });
});
