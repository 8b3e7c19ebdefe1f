/**
 * A GeoJSON discovery read in two parts side by side (ADR 0156) answers what the discovery in
 * order answers — the same layer, warnings, and the same error — wherever the split falls: at an
 * item's end (merged), anywhere else (the head reads the whole file), in a part that fails (read in
 * order again).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mergeParts, SPLIT_FROM_BYTES, splitCandidate } from '#datasources/imports/formats/geojson-parts.ts';
import { discover, discoverInParts, discoverySplit } from '#datasources/imports/formats/index.ts';
import { geometryInfo, LayerScan } from '#datasources/imports/formats/scan.ts';
import type { Discovery } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { point, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** What a discovery settles to: its value, or its error's code and message. */
async function outcome(run: () => Promise<Discovery>): Promise<unknown> {
  try {
    return { value: await run() };
  } catch (error) {
    if (!(error instanceof ImportInputError)) throw error;
    return { code: error.code, message: error.message };
  }
}

/** The offsets just past each `}` that closes an item of the features array (or of a bare array). */
function itemEnds(text: string): number[] {
  const bytes = Buffer.from(text);
  const ends: number[] = [];
  const itemDepth = text.trimStart().startsWith('[') ? 1 : 2;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (c === 0x7d && depth === itemDepth) ends.push(i + 1);
    }
  }
  return ends;
}

const pt = (x: number, y: number, properties: Record<string, unknown> = {}) => point(x, y, properties);
const poly = (x: number, properties: Record<string, unknown> = {}) => ({
  type: 'Feature',
  properties,
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [x, 0],
        [x + 1, 0],
        [x + 1, 1],
        [x, 0],
      ],
    ],
  },
});

/** Documents whose discovery must not depend on where it is split. */
const documents: Record<string, string> = {
  'fields first seen late, nulls and types widening across the split': JSON.stringify({
    type: 'FeatureCollection',
    features: [
      pt(1, 2, { a: 1 }),
      { type: 'Feature', properties: { a: null, b: 'x' }, geometry: null },
      pt(3, 4, { a: 2.5, c: true }),
      pt(5, 6, { a: 3, d: { k: [1] }, tricky: '},{"type":"Feature"' }),
      pt(7, 8, { e: 2 ** 40, c: false }),
      pt(-9, -10, { f: 'late', a: 4 }),
    ],
  }),
  'a crs member after the features, a bbox before, white space between items': `{"bbox":[0,0,1,1],"type":"FeatureCollection","features":[\n  ${[1, 2, 3, 4, 5].map((i) => JSON.stringify(pt(i * 100000, i, { i }))).join(' ,\n  ')}\n],"crs":{"type":"name","properties":{"name":"EPSG:3857"}}}`,
  'a bare array of features': JSON.stringify([pt(1, 1, { n: 1 }), pt(2, 2, { n: 'two' }), pt(3, 3)]),
  'singles and multis of one family across the split': JSON.stringify({
    type: 'FeatureCollection',
    features: [
      poly(1),
      poly(2),
      {
        type: 'Feature',
        properties: {},
        geometry: { type: 'MultiPolygon', coordinates: [poly(5).geometry.coordinates] },
      },
      poly(3),
    ],
  }),
  'geometries with Z after ones without': JSON.stringify({
    type: 'FeatureCollection',
    features: [
      pt(1, 1),
      pt(2, 2),
      point(3, 3),
      { ...pt(4, 4), geometry: { type: 'Point', coordinates: [4, 4, 9] } },
    ],
  }),
  'mixed geometry families: the first of the other one is named by its place in the file': JSON.stringify({
    type: 'FeatureCollection',
    features: [pt(1, 1), pt(2, 2), { type: 'Feature', properties: {}, geometry: null }, poly(1), poly(2)],
  }),
  'a coordinate out of range late in the file': JSON.stringify({
    type: 'FeatureCollection',
    features: [pt(1, 1), pt(2, 2), pt(3, 3), pt(200, 3), pt(300, 3)],
  }),
  'an item that is not a Feature late in the file': JSON.stringify({
    type: 'FeatureCollection',
    features: [pt(1, 1), pt(2, 2), pt(3, 3), { type: 'Nope' }, pt(4, 4)],
  }),
  'malformed JSON late in the file': `{"type":"FeatureCollection","features":[${JSON.stringify(pt(1, 1))},${JSON.stringify(pt(2, 2))},${JSON.stringify(pt(3, 3))},{"type":"Feature","properties":{"a":tru},"geometry":null},${JSON.stringify(pt(4, 4))}]}`,
  'malformed JSON early in the file': `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1,},"geometry":null},${JSON.stringify(pt(2, 2))},${JSON.stringify(pt(3, 3))}]}`,
  'a file cut short': `{"type":"FeatureCollection","features":[${JSON.stringify(pt(1, 1))},${JSON.stringify(pt(2, 2))},${JSON.stringify(pt(3, 3))}`,
  'a single Feature (no array to split)': JSON.stringify(pt(5, 5, { only: 1 })),
};

describe('discovery in two parts (ADR 0156)', () => {
  for (const [title, text] of Object.entries(documents)) {
    it(`answers as the discovery in order, split anywhere: ${title}`, async () => {
      // Prepare: every item's end (merged), and offsets that are no item's end (inside a string,
      // inside a geometry, before and after the array, the file's ends).
      const path = tmp.file(`doc-${title.length}-${text.length}.geojson`, text);
      const size = Buffer.byteLength(text);
      const ends = itemEnds(text);
      const others = [0, 7, Math.floor(size / 2), size - 1];
      // Act
      const inOrder = await outcome(() => discover(path, 'doc.geojson'));
      const split = [];
      for (const at of [...new Set([...ends, ...others])]) {
        split.push({ at, outcome: await outcome(() => discoverInParts(path, 'doc.geojson', at)) });
      }
      // Assess
      for (const { at, outcome: got } of split) expect({ at, got }).toEqual({ at, got: inOrder });
    });
  }

  it('names the first feature of the other family and an out-of-range coordinate by their place in the file', async () => {
    // Prepare: the tail's first polygon is the file's feature 3.
    const text = documents[
      'mixed geometry families: the first of the other one is named by its place in the file'
    ] as string;
    const path = tmp.file('mixed.geojson', text);
    const at = itemEnds(text)[2] as number;
    const range = tmp.file(
      'range.geojson',
      documents['a coordinate out of range late in the file'] as string,
    );
    // Act
    const mixed = await outcome(() => discoverInParts(path, 'mixed.geojson', at));
    const far = await outcome(() =>
      discoverInParts(
        range,
        'range.geojson',
        itemEnds(documents['a coordinate out of range late in the file'] as string)[1] as number,
      ),
    );
    // Assess
    expect(mixed).toMatchObject({
      code: 'mixed_geometry_types',
      message: expect.stringMatching(/Point \(first at feature 0\) and Polygon \(first at feature 3\)/),
    });
    expect(far).toMatchObject({
      code: 'coordinates_out_of_range',
      message: expect.stringMatching(/^Feature 3 of layer/),
    });
  });

  it('reports progress that never goes back and ends at the file size', async () => {
    // Prepare
    const features = Array.from({ length: 3000 }, (_, i) => pt(i / 100, i / 100, { i, name: `n${i}` }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const path = tmp.file('progress.geojson', text);
    const at = itemEnds(text)[1500] as number;
    const seen: number[] = [];
    // Act
    const discovery = await discoverInParts(path, 'progress.geojson', at, { onBytes: (b) => seen.push(b) });
    // Assess
    expect(discovery.layers[0]?.feature_count).toBe(3000);
    expect(seen.length).toBeGreaterThan(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as number);
    expect(seen.at(-1)).toBe(Buffer.byteLength(text));
  });

  it('stops with the signal’s AbortError', async () => {
    const features = Array.from({ length: 2000 }, (_, i) => pt(i / 100, i / 100, { i }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const path = tmp.file('abort.geojson', text);
    const controller = new AbortController();
    controller.abort();
    await expect(
      discoverInParts(path, 'abort.geojson', itemEnds(text)[1000] as number, { signal: controller.signal }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('where a discovery splits', () => {
  it('splits a GeoJSON file from SPLIT_FROM_BYTES at an item’s end past the middle, and nothing smaller or of another format', async () => {
    // Prepare: a FeatureCollection just over the size, one just under, and a CSV over it.
    const item = JSON.stringify(pt(12.5, 41.9, { name: 'a feature of some length', n: 12345 }));
    const count = Math.ceil(SPLIT_FROM_BYTES / (item.length + 1)) + 10;
    const big = `{"type":"FeatureCollection","features":[${Array(count).fill(item).join(',')}]}`;
    const bigPath = tmp.file('big.geojson', big);
    const smallPath = tmp.file('small.geojson', `${big.slice(0, big.length - 40 * (item.length + 1) - 2)}]}`);
    const csvPath = tmp.file(
      'big.csv',
      `x,y,name\n${'1.5,2.5,somewhere\n'.repeat(Math.ceil(SPLIT_FROM_BYTES / 17) + 10)}`,
    );
    // Act
    const at = await discoverySplit(bigPath, 'big.geojson');
    const small = await discoverySplit(smallPath, 'small.geojson');
    const csv = await discoverySplit(csvPath, 'big.csv');
    // Assess: an item's end (the bytes before it end in '}', a ',' follows), past the middle.
    expect(small).toBeUndefined();
    expect(csv).toBeUndefined();
    expect(at).toBeGreaterThan(big.length / 2);
    expect(at).toBeLessThan(big.length * 0.75);
    expect(big[(at as number) - 1]).toBe('}');
    expect(big[at as number]).toBe(',');
    expect(itemEnds(big)).toContain(at);
  });

  it('finds no candidate where no item ends near the middle', async () => {
    const text = `{"type":"FeatureCollection","features":[${JSON.stringify(pt(1, 1, { blob: 'x'.repeat(600_000) }))}]}`;
    const path = tmp.file('one-big-item.geojson', text);
    expect(await splitCandidate(path, Buffer.byteLength(text))).toBeUndefined();
  });
});

describe('a scan taken in after another (LayerScan.absorb)', () => {
  /** Scans `features` (index from `first`) into a new scan. */
  const scanOf = (features: ReturnType<typeof pt>[], first = 0) => {
    const scan = new LayerScan('layer');
    features.forEach((f, k) => {
      scan.count++;
      scan.fields.addProperties(f.properties);
      scan.addGeometry(
        first + k,
        f.geometry ? geometryInfo(f.geometry, `feature ${first + k}`, scan.judging) : null,
      );
    });
    return scan;
  };
  /** A scan's result without the range check, and the range check's error. */
  const settle = (scan: () => LayerScan) => {
    const warnings: string[] = [];
    const layer = scan().result(4326, warnings, { written: true, checkRange: false });
    let range: string | undefined;
    try {
      scan().result(4326, [], { written: true });
    } catch (error) {
      range = (error as Error).message;
    }
    return { layer, warnings, range };
  };

  it('makes the result of one scan in order, split at every place', () => {
    // Prepare: a seeded mix of points and multipoints, 2D and 3D, nulls, out-of-range, values of every kind.
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const values = [1, 2.5, 2 ** 40, 'text', true, null, { k: 1 }, '12'];
    const features = Array.from({ length: 60 }, (_, i) => {
      const properties: Record<string, unknown> = {};
      for (const name of ['a', 'b', 'c', `late${i % 7}`])
        if (random() < 0.6) properties[name] = values[Math.floor(random() * values.length)];
      const r = random();
      const x = random() < 0.05 ? 200 : random() * 10;
      const geometry =
        r < 0.1
          ? null
          : r < 0.3
            ? {
                type: 'MultiPoint',
                coordinates: [
                  [x, 1],
                  [x + 1, 2],
                ],
              }
            : r < 0.4
              ? { type: 'Point', coordinates: [x, 1, 5] }
              : { type: 'Point', coordinates: [x, random() * 10] };
      return { type: 'Feature', properties, geometry } as unknown as ReturnType<typeof pt>;
    });
    const inOrder = settle(() => scanOf(features));
    // Act / Assess
    for (let k = 0; k <= features.length; k++) {
      const merged = settle(() => {
        const scan = new LayerScan('layer');
        scan.absorb(scanOf(features.slice(0, k)).snapshot());
        scan.absorb(structuredClone(scanOf(features.slice(k)).snapshot()));
        return scan;
      });
      expect({ k, merged }).toEqual({ k, merged: inOrder });
    }
    // The scan in order had every kind of thing to merge.
    expect(inOrder.layer).toMatchObject({ geometry_type: 'MultiPoint', feature_count: 60 });
    expect(inOrder.layer.fields.length).toBeGreaterThan(5);
    expect(inOrder.warnings.join()).toMatch(/mixes.*no geometry/s);
    expect(inOrder.range).toMatch(/^Feature \d+ of layer 'layer' has longitude 20[01]\b/);
  });

  it('refuses more fields than the limit when the parts together have them', () => {
    const head = new LayerScan('layer', undefined, 3);
    head.fields.addProperties({ a: 1, b: 2 });
    const tail = new LayerScan('layer', undefined, 3);
    tail.fields.addProperties({ b: 1, c: 2, d: 3 });
    const merged = new LayerScan('layer', undefined, 3);
    merged.absorb(head.snapshot());
    expect(() => merged.absorb(tail.snapshot())).toThrow(/more than 3 fields/);
  });

  it('merges parts of a real file to what the file in order discovers', async () => {
    // The parts as the reader threads answer them, merged here.
    const text = documents['fields first seen late, nulls and types widening across the split'] as string;
    const path = tmp.file('parts.geojson', text);
    const at = itemEnds(text)[2] as number;
    const { discoverPart } = await import('#datasources/imports/formats/direct.ts');
    const head = await discoverPart(path, 'parts.geojson', { to: at });
    const tail = await discoverPart(path, 'parts.geojson', { from: at });
    expect(head.kind).toBe('head');
    expect(tail.kind).toBe('tail');
    if (head.kind !== 'head' || tail.kind !== 'tail') return;
    expect(mergeParts(head, tail, 'parts.geojson', Buffer.byteLength(text), 100)).toEqual(
      await discover(path, 'parts.geojson'),
    );
  });
});
