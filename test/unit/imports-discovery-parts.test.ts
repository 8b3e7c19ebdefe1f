/**
 * A GeoJSON, GeoJSONSeq or CSV discovery read in two parts side by side (ADR 0156) answers what
 * the discovery in order answers — the same layer, warnings, and the same error — wherever the
 * split falls: at a feature's end (merged), anywhere else (the head reads the whole file), in a
 * part that fails (read in order again).
 */
import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { discover as discoverHere, discoverPart } from '#datasources/imports/formats/direct.ts';
import {
  discoveryOfParts,
  mergeParts,
  SPLIT_FROM_BYTES,
  splitCandidate,
} from '#datasources/imports/formats/discovery-parts.ts';
import { discover, discoverInParts, discoverySplit } from '#datasources/imports/formats/index.ts';
import { DEFAULT_LIMITS } from '#datasources/imports/formats/limits.ts';
import { geometryInfo, LayerScan } from '#datasources/imports/formats/scan.ts';
import type { Discovery } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { point, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/**
 * The discovery in parts by the product's rule (`discoveryOfParts`), its parts read on this thread
 * by the functions the reader threads run (`discoverPart`, the discovery in order): every split a
 * test makes costs no thread. `discoverInParts` runs the same rule on reader threads (tests below).
 */
async function inParts(path: string, name: string, at: number): Promise<Discovery> {
  const reads = {
    head: discoverPart(path, name, { to: at }),
    tail: discoverPart(path, name, { from: at }),
    stopTail: () => undefined,
    inOrder: () => discoverHere(path, name),
  };
  return (await discoveryOfParts(reads, name, statSync(path).size, DEFAULT_LIMITS.maxFields)).discovery;
}

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
      const others = [0, 1, 7, Math.floor(size / 3), Math.floor(size / 2), size - 2, size - 1, size];
      // Act
      const inOrder = await outcome(() => discoverHere(path, 'doc.geojson'));
      const split = [];
      for (const at of [...new Set([...ends, ...others])]) {
        split.push({ at, outcome: await outcome(() => inParts(path, 'doc.geojson', at)) });
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

  it('answers the same on reader threads: merged, whole, after a failing tail, and the head’s error', async () => {
    // Prepare: a GeoJSON file and a CSV file split at a feature's end, inside a feature, before an
    // error in the tail and after one in the head.
    const good = documents['fields first seen late, nulls and types widening across the split'] as string;
    const late = documents['malformed JSON late in the file'] as string;
    const early = documents['malformed JSON early in the file'] as string;
    const csv = lineDocuments['CSV with lon/lat, a quoted cell across lines, an empty line, CRLF and a BOM'];
    const cases = [
      { name: 'good.geojson', text: good, at: itemEnds(good)[2] as number },
      { name: 'good.geojson', text: good, at: (itemEnds(good)[2] as number) - 5 },
      { name: 'late.geojson', text: late, at: itemEnds(late)[1] as number },
      { name: 'early.geojson', text: early, at: itemEnds(early)[1] as number },
      { name: 'places.csv', text: csv?.text as string, at: csv?.ends(csv.text)[3] as number },
    ];
    // Act / Assess
    for (const { name, text, at } of cases) {
      const path = tmp.file(`threads-${at}-${name}`, text);
      const inOrder = await outcome(() => discover(path, name));
      expect({ name, at, got: await outcome(() => discoverInParts(path, name, at)) }).toEqual({
        name,
        at,
        got: inOrder,
      });
    }
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

/** The offsets of every byte `byte` in `text` (plus `after`: the offset past it). */
const offsetsOf = (text: string, byte: number, after = 0): number[] => {
  const bytes = Buffer.from(text);
  const out: number[] = [];
  for (let i = bytes.indexOf(byte); i !== -1; i = bytes.indexOf(byte, i + 1)) out.push(i + after);
  return out;
};

/** Line-based documents: split at every line break (a row's or record's end, or inside a quoted cell). */
const lineDocuments: Record<string, { name: string; text: string; ends: (text: string) => number[] }> = {
  'CSV with lon/lat, a quoted cell across lines, an empty line, CRLF and a BOM': {
    name: 'places.csv',
    text: `\uFEFFid,name,lon,lat,note\r\n1,a,1.5,2.5,plain\r\n2,"b\r\nstill b",3,4,"x,y"\r\n\r\n3,c,-5,6,\r\n4,d,7,8,12\r\n5,e,9,10,true\r\n`,
    ends: (t) => offsetsOf(t, 0x0a, 1),
  },
  'CSV with a WKT column and a type that widens late': {
    name: 'shapes.csv',
    text: `wkt,n\n"POINT (1 2)",1\n"POINT (3 4)",2\n"MULTIPOINT ((5 6), (7 8))",3.5\n"POINT (9 10)",x\n`,
    ends: (t) => offsetsOf(t, 0x0a, 1),
  },
  'CSV whose coordinates turn bad late': {
    name: 'bad.csv',
    text: `lon,lat\n1,2\n3,4\n5,6\nseven,8\n9,10\n`,
    ends: (t) => offsetsOf(t, 0x0a, 1),
  },
  'CSV with a coordinate out of range late': {
    name: 'far.csv',
    text: `lon,lat,k\n1,2,a\n3,4,b\n500,6,c\n7,8,d\n`,
    ends: (t) => offsetsOf(t, 0x0a, 1),
  },
  'GeoJSONSeq with blank lines, fields first seen late and Multi promotion': {
    name: 'lines.geojsonl',
    text: [
      pt(1, 1, { a: 1 }),
      pt(2, 2, { b: 'x' }),
      null,
      { type: 'MultiPoint', coordinates: [[3, 3]] },
      pt(4, 4, { a: 2.5 }),
    ]
      .map((f) => (f === null ? '   ' : JSON.stringify(f)))
      .join('\n'),
    ends: (t) => offsetsOf(t, 0x0a),
  },
  'GeoJSON text sequence (RS) with a record spanning lines and one out of range late': {
    name: 'seq.geojsons',
    text: [pt(1, 1), pt(2, 2), pt(300, 3), pt(4, 4)]
      .map((f, i) => `\x1e${JSON.stringify(f, null, i === 1 ? 1 : 0)}\n`)
      .join(''),
    ends: (t) => offsetsOf(t, 0x1e),
  },
  'GeoJSONSeq with a malformed record late': {
    name: 'broken.geojsonl',
    text: `${JSON.stringify(pt(1, 1))}\n${JSON.stringify(pt(2, 2))}\n{"type":"Feature",\n${JSON.stringify(pt(3, 3))}\n`,
    ends: (t) => offsetsOf(t, 0x0a),
  },
};

describe('line-based discovery in two parts (ADR 0156)', () => {
  for (const [title, { name, text, ends }] of Object.entries(lineDocuments)) {
    it(`answers as the discovery in order, split anywhere: ${title}`, async () => {
      // Prepare
      const path = tmp.file(`${title.length}-${name}`, text);
      const size = Buffer.byteLength(text);
      const others = [1, 9, Math.floor(size / 3), Math.floor(size / 2), size - 1];
      // Act
      const inOrder = await outcome(() => discoverHere(path, name));
      const split = [];
      for (const at of [...new Set([...ends(text), ...others])].filter((n) => n > 0 && n <= size)) {
        split.push({ at, outcome: await outcome(() => inParts(path, name, at)) });
      }
      // Assess
      for (const { at, outcome: got } of split) expect({ at, got }).toEqual({ at, got: inOrder });
    });
  }

  it('names a CSV row and a GeoJSONSeq record of the tail by their line in the file, merged', async () => {
    // Prepare: the tails hold the first out-of-range coordinate; the parts merge (no error in either).
    const csv = 'lon,lat\n1,2\n3,4\n5,6\n500,6\n7,8\n';
    const seq = [pt(1, 1), pt(2, 2), pt(3, 3), pt(300, 3), pt(4, 4)].map((f) => JSON.stringify(f)).join('\n');
    const csvPath = tmp.file('late.csv', csv);
    const seqPath = tmp.file('late.geojsonl', seq);
    const { discoverPart } = await import('#datasources/imports/formats/direct.ts');
    const csvAt = offsetsOf(csv, 0x0a, 1)[2] as number;
    const seqAt = offsetsOf(seq, 0x0a)[1] as number;
    // Act
    const parts = await Promise.all([
      discoverPart(csvPath, 'late.csv', { to: csvAt }),
      discoverPart(csvPath, 'late.csv', { from: csvAt }),
      discoverPart(seqPath, 'late.geojsonl', { to: seqAt }),
      discoverPart(seqPath, 'late.geojsonl', { from: seqAt }),
    ]);
    const [csvHead, csvTail, seqHead, seqTail] = parts;
    // Assess
    expect(parts.map((p) => p.kind)).toEqual(['head', 'tail', 'head', 'tail']);
    if (csvHead?.kind !== 'head' || csvTail?.kind !== 'tail') return;
    if (seqHead?.kind !== 'head' || seqTail?.kind !== 'tail') return;
    expect(() => mergeParts(csvHead, csvTail, 'late.csv', csv.length, 100)).toThrow(
      /^Line 5 of layer 'late' has longitude 500/,
    );
    expect(() => mergeParts(seqHead, seqTail, 'late.geojsonl', seq.length, 100)).toThrow(
      /^Line 4 \(feature 3\) of layer 'late' has longitude 300/,
    );
    await expect(discover(csvPath, 'late.csv')).rejects.toThrow(/^Line 5 of layer/);
  });
});

describe('where a discovery splits', () => {
  it('splits GeoJSON, GeoJSONSeq and CSV from their sizes at a feature’s end past the middle, and nothing smaller or of another format', async () => {
    // Prepare: a FeatureCollection, a GeoJSONSeq and a CSV just over their sizes, the same just
    // under, and a FlatGeobuf (by its magic bytes) over every size.
    const item = JSON.stringify(pt(12.5, 41.9, { name: 'a feature of some length', n: 12345 }));
    const repeat = (unit: string, bytes: number) => Array(Math.ceil(bytes / unit.length) + 10).fill(unit);
    const collection = (bytes: number) =>
      `{"type":"FeatureCollection","features":[${repeat(`${item},`, bytes).join('').slice(0, -1)}]}`;
    const lines = (bytes: number) => repeat(`${item}\n`, bytes).join('');
    const csv = (bytes: number) => `x,y,name\n${repeat('1.5,2.5,"some\nwhere"\n', bytes).join('')}`;
    const under = (n: number) => n - 64 * 1024;
    const files = {
      geojson: [collection(SPLIT_FROM_BYTES.geojson), collection(under(SPLIT_FROM_BYTES.geojson))],
      geojsonl: [lines(SPLIT_FROM_BYTES.geojsonseq), lines(under(SPLIT_FROM_BYTES.geojsonseq))],
      csv: [csv(SPLIT_FROM_BYTES.csv), csv(under(SPLIT_FROM_BYTES.csv))],
    };
    const fgb = tmp.file(
      'big.fgb',
      Buffer.concat([
        Buffer.from([0x66, 0x67, 0x62, 0x03, 0x66, 0x67, 0x62, 0]),
        Buffer.alloc(SPLIT_FROM_BYTES.geojson),
      ]),
    );
    // Act
    const found: Record<string, (number | undefined)[]> = {};
    for (const [ext, texts] of Object.entries(files)) {
      found[ext] = [];
      for (const [k, text] of texts.entries()) {
        const name = `${k === 0 ? 'big' : 'small'}.${ext}`;
        found[ext]?.push(await discoverySplit(tmp.file(name, text), name));
      }
    }
    const other = await discoverySplit(fgb, 'big.fgb');
    // Assess: past the middle, where a feature of the file's format ends; none for the rest.
    expect(other).toBeUndefined();
    for (const [ext, [at, small]] of Object.entries(found) as [
      keyof typeof files,
      (number | undefined)[],
    ][]) {
      const text = files[ext][0] as string;
      expect({ ext, small }).toEqual({ ext, small: undefined });
      expect(at).toBeGreaterThan(text.length / 2);
      expect(at).toBeLessThan(text.length * 0.75);
      const before = text.slice(0, at);
      if (ext === 'geojson') expect(itemEnds(text)).toContain(at);
      if (ext === 'geojsonl') expect(text[at as number]).toBe('\n');
      if (ext === 'csv') expect(before.endsWith('\n')).toBe(true);
    }
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
