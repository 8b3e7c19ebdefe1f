import { afterAll, describe, expect, it } from 'vitest';
import { castValue, MISFIT } from '#datasources/imports/database-values.ts';
import { readFeatures as readInThread } from '#datasources/imports/formats/direct.ts';
import { readFeatures, readRows } from '#datasources/imports/formats/index.ts';
import { FEATURES_AT_ONCE, featureBatch } from '#datasources/imports/formats/source.ts';
import { ReadLimit } from '#datasources/imports/formats/types.ts';
import { geometryText } from '#datasources/imports/geometry-text.ts';
import {
  appendRows,
  emptyBatch,
  type RowBatch,
  type RowShape,
  rowBatches,
} from '#datasources/imports/staged-rows.ts';
import type { SourceFeature, SourceGeometry } from '#domain/import-sources.ts';
import { collect, tempDir } from '../fixtures/imports/support.ts';

/**
 * The loader's rows are built in the format reader's thread (staged-rows.ts): what crosses is
 * columns of cast values and geometry text. They must be exactly what casting each feature in the
 * loader's thread gave, in order, with misfits, ends and the failure of an unreadable geometry.
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const shape: RowShape = {
  label: 'places',
  columns: [
    { name: 'rank', source: 'rank', type: 'integer' },
    { name: 'label', source: 'name', type: 'text' },
    { name: 'seen', source: 'seen', type: 'date' },
  ],
  geometry: true,
};

const feature = (i: number, geometry: unknown = { type: 'Point', coordinates: [i, -i] }) => ({
  type: 'Feature',
  properties: {
    rank: i % 5 === 0 ? 'many' : i,
    name: `p\t${i}`,
    seen: i % 3 === 0 ? '2024-02-30' : '2024-02-01',
  },
  geometry,
});

/** Every row of the batches, one object each, as the loader's thread used to build them. */
function rowsOf(batches: RowBatch[]) {
  const rows: { values: unknown[]; geometry: string | null; misfits: string[]; end: number | null }[] = [];
  for (const b of batches) {
    for (let r = 0; r < b.count; r++) {
      const misfits: string[] = [];
      for (let i = 0; i < b.misfits.length; i += 2) {
        if (b.misfits[i] === r) misfits.push(shape.columns[b.misfits[i + 1] as number]?.name as string);
      }
      rows.push({
        values: b.values.map((column) => column[r]),
        geometry: b.geometries[r] ?? null,
        misfits,
        end: b.ends[r] ?? null,
      });
    }
  }
  return rows;
}

/** What casting each feature one by one gives. */
function expected(features: SourceFeature[]) {
  return features.map((f) => {
    const misfits: string[] = [];
    const values = shape.columns.map((c) => {
      const v = castValue(f.properties[c.source], c.type);
      if (v === MISFIT) misfits.push(c.name);
      return v === MISFIT ? null : v;
    });
    return { values, geometry: f.geometry ? geometryText(f.geometry) : null, misfits, end: f.end ?? null };
  });
}

/** The features as a reader gives them: batches (of 7 here, across the row batches' bounds). */
async function* from(features: SourceFeature[]) {
  for (let i = 0; i < features.length; i += 7) yield features.slice(i, i + 7);
}

describe('staged rows (built where the file is read)', () => {
  it('casts values, counts misfits per row and writes geometries, in bounded batches', async () => {
    // Prepare
    const features: SourceFeature[] = Array.from({ length: 23 }, (_, i) => ({
      ...(feature(i + 1) as SourceFeature),
      end: (i + 1) * 10,
    }));
    features[4] = { ...(features[4] as SourceFeature), geometry: null };

    // Act
    const batches: RowBatch[] = [];
    for await (const b of rowBatches(from(features), shape, 1, () => 7, {
      features: 5,
      bytes: 1e9,
      ms: 1e9,
    })) {
      batches.push(b);
    }

    // Assess
    expect(batches.map((b) => b.count)).toEqual([5, 5, 5, 5, 3]);
    expect(rowsOf(batches)).toEqual(expected(features));
    expect(rowsOf(batches)[4]?.misfits).toEqual(['rank']);
    expect(batches.every((b) => b.positions.every((p) => p === 7))).toBe(true);
    expect(batches.every((b) => b.failure === undefined)).toBe(true);
  });

  it('appends any slice of a batch to another, misfits moved to their new rows', async () => {
    // Prepare
    const features = Array.from({ length: 9 }, (_, i) => feature(i + 1) as SourceFeature);
    const [whole] = await collect2(rowBatches(from(features), shape, 1, () => 0));
    const target = emptyBatch(shape);

    // Act: rows 0–2, then 3–8 in two slices
    appendRows(target, whole as RowBatch, 0, 3);
    appendRows(target, whole as RowBatch, 3, 5);
    appendRows(target, whole as RowBatch, 5, 9);
    appendRows(target, whole as RowBatch, 9, 9);

    // Assess
    expect(target).toEqual(whole);
    expect(rowsOf([target]).map((r) => r.misfits)).toEqual(expected(features).map((r) => r.misfits));
  });

  it('ends with the rows before an unreadable geometry and a failure naming its feature', async () => {
    // Prepare: feature 8 of a read resumed after 4 (fids from 5 on) has coordinates that are not numbers
    const features = Array.from({ length: 6 }, (_, i) => feature(i + 5) as SourceFeature);
    features[3] = { ...(features[3] as SourceFeature), geometry: { type: 'Point', coordinates: ['a', 1] } };

    // Act
    const batches = await collect2(rowBatches(from(features), shape, 5, () => 0));

    // Assess
    expect(batches.map((b) => b.count)).toEqual([3]);
    expect(batches[0]?.failure).toMatch(/^layer places: feature 8 has a geometry that can't be read/);
  });
});

describe('staged rows through the reader thread (readRows)', () => {
  it('are the rows of the features the same read yields, wherever the batches end', async () => {
    // Prepare: 2,400 features (several batches), lines with a tab, misfits, a null geometry
    const features = Array.from({ length: 2400 }, (_, i) =>
      feature(i + 1, i === 1000 ? null : { type: 'Point', coordinates: [i / 10, i / 20] }),
    );
    const path = tmp.file('places.geojson', JSON.stringify({ type: 'FeatureCollection', features }));

    // Act
    const read = await collect(readFeatures(path, 'places.geojson', 'places', { skip: 100 }));
    const batches = await collect2(readRows(path, 'places.geojson', 'places', shape, { skip: 100 }));

    // Assess
    expect(read).toHaveLength(2300);
    expect(batches.length).toBeGreaterThan(1);
    expect(rowsOf(batches)).toEqual(expected(read));
  });

  it('write packed coordinates as the parsed arrays are written: every geometry type, 2D and 3D, every number form', async () => {
    // Prepare: geometries the reader packs (lines, polygons, multis) and ones it leaves to
    // JSON.parse (points, an XYZM line, a type nested unlike its coordinates, a collection)
    const geometries = [
      {
        type: 'LineString',
        coordinates: [
          [1e-7, -0],
          [150, 2.000000000000001],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [10, 0],
            [10, 10],
            [0, 0],
          ],
          [
            [1, 1],
            [2, 1],
            [1, 2],
            [1, 1],
          ],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0, 5],
            [1, 0, 5],
            [1, 1, 6],
            [0, 0, 5],
          ],
        ],
      },
      {
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      },
      {
        type: 'MultiLineString',
        coordinates: [
          [
            [0, 0],
            [1, 1],
          ],
          [
            [2, 2],
            [3, 3],
          ],
        ],
      },
      {
        type: 'MultiPolygon',
        coordinates: [
          [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 0],
            ],
          ],
          [
            [
              [5, 5, 1],
              [6, 5, 1],
              [6, 6, 1],
              [5, 5, 1],
            ],
          ],
        ],
      },
      { type: 'Point', coordinates: [123456789.12345679, -1e22] },
      {
        type: 'LineString',
        coordinates: [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
        ],
      },
      { type: 'MultiPoint', coordinates: [[[1, 2]], [[3, 4]]] },
      {
        type: 'GeometryCollection',
        geometries: [
          {
            type: 'LineString',
            coordinates: [
              [0, 0],
              [1, 1],
            ],
          },
        ],
      },
    ];
    const features = Array.from({ length: 1200 }, (_, i) =>
      feature(i + 1, geometries[i % geometries.length]),
    );
    const path = tmp.file('shapes.geojson', JSON.stringify({ type: 'FeatureCollection', features }));

    // Act
    const read = await collect(readFeatures(path, 'shapes.geojson', 'shapes'));
    const batches = await collect2(readRows(path, 'shapes.geojson', 'shapes', shape));

    // Assess: one nested too deep for its type fails as it did (the rows before it are written)
    const failing = read.findIndex(
      (f) =>
        f.geometry &&
        (f.geometry as { type: string }).type === 'MultiPoint' &&
        Array.isArray(((f.geometry as { coordinates: unknown[][] }).coordinates[0] as unknown[])[0]),
    );
    expect(failing).toBe(8);
    expect(batches.reduce((n, b) => n + b.count, 0)).toBe(8);
    expect(rowsOf(batches)).toEqual(expected(read.slice(0, 8)));
    let parsedError = '';
    try {
      geometryText(read[8]?.geometry as SourceGeometry);
    } catch (error) {
      parsedError = (error as Error).message;
    }
    expect(parsedError).toBe('a position with fewer than 2 numbers');
    expect(batches.at(-1)?.failure).toBe(
      `layer places: feature 9 has a geometry that can't be read (${parsedError}).`,
    );
  });

  it('write the packed geometries of many chunks as the parsed arrays are written', async () => {
    // Prepare: 3 MB of polygons (several 1 MB chunks, items across their edges)
    const features = Array.from({ length: 12_000 }, (_, i) =>
      feature(i + 1, {
        type: 'Polygon',
        coordinates: [
          [
            [i / 3, -i / 7],
            [i / 3 + 0.1, -i / 7],
            [i / 3 + 0.1, -i / 7 + 0.1],
            [i / 3, -i / 7],
          ],
        ],
      }),
    );
    const path = tmp.file('squares.geojson', JSON.stringify({ type: 'FeatureCollection', features }));

    // Act
    const read = await collect(readFeatures(path, 'squares.geojson', 'squares'));
    const batches = await collect2(readRows(path, 'squares.geojson', 'squares', shape));

    // Assess
    expect(read).toHaveLength(12_000);
    expect(rowsOf(batches)).toEqual(expected(read));
  });

  it('stop at an unreadable geometry, the last batch naming the feature by its number in the layer', async () => {
    // Prepare
    const features = Array.from({ length: 700 }, (_, i) =>
      feature(i + 1, i === 649 ? { type: 'Polygon', coordinates: [[[0, 0], [1]]] } : undefined),
    );
    const path = tmp.file('broken.geojson', JSON.stringify({ type: 'FeatureCollection', features }));

    // Act
    const batches = await collect2(readRows(path, 'broken.geojson', 'broken', shape));

    // Assess
    expect(batches.reduce((n, b) => n + b.count, 0)).toBe(649);
    expect(batches.at(-1)?.failure).toMatch(
      /^layer places: feature 650 has a geometry that can't be read \(a position with fewer than 2 numbers\)/,
    );
    expect(batches.slice(0, -1).every((b) => b.failure === undefined)).toBe(true);
  });

  it('go no further than the read limit until it moves, then on to the end (ADR 0150)', async () => {
    // Prepare: 2,400 features read from feature 100 on, the consumer taking up to feature 1,100
    const features = Array.from({ length: 2400 }, (_, i) => feature(i + 1));
    const path = tmp.file('limited.geojson', JSON.stringify({ type: 'FeatureCollection', features }));
    const limit = new ReadLimit();
    limit.set(1100);
    const rows = readRows(path, 'limited.geojson', 'limited', shape, { skip: 100, limit });
    const iterator = rows[Symbol.asyncIterator]();
    const taken: RowBatch[] = [];
    let count = 0;

    // Act: take batches until the limit is reached; then ask for one more, which must wait
    while (count < 1000) {
      const next = await iterator.next();
      if (next.done) break;
      taken.push(next.value);
      count += next.value.count;
    }
    const pending = iterator.next();
    const waited = await Promise.race([
      pending.then(() => 'answered'),
      new Promise((resolve) => setTimeout(() => resolve('waiting'), 400)),
    ]);
    const before = count;
    limit.set(Number.POSITIVE_INFINITY);
    for (let next = await pending; !next.done; next = await iterator.next()) taken.push(next.value);

    // Assess: no batch began past the limit while it held (at most the batch that crossed it, 500
    // features), and once it moved the read went on: every row exactly once, in order
    expect(waited).toBe('waiting');
    expect(before).toBeGreaterThanOrEqual(1000);
    expect(before).toBeLessThan(1000 + 500);
    const read = await collect(readFeatures(path, 'limited.geojson', 'limited', { skip: 100 }));
    expect(rowsOf(taken)).toEqual(expected(read));
  });

  it('end cleanly when the consumer stops while the read waits at its limit', async () => {
    // Prepare
    const features = Array.from({ length: 1500 }, (_, i) => feature(i + 1));
    const path = tmp.file('stopped.geojson', JSON.stringify({ type: 'FeatureCollection', features }));
    const limit = new ReadLimit();
    limit.set(600);
    const iterator = readRows(path, 'stopped.geojson', 'stopped', shape, { limit })[Symbol.asyncIterator]();
    let count = 0;
    while (count < 600) count += ((await iterator.next()).value as RowBatch).count;

    // Act: leave early (the loader's `return`), then read the same file again
    const stopped = await iterator.return(undefined);
    const again = await collect2(readRows(path, 'stopped.geojson', 'stopped', shape));

    // Assess: the stop answered (the thread ended its job) and the thread reads on for the next job
    expect(stopped.done).toBe(true);
    expect(again.reduce((n, b) => n + b.count, 0)).toBe(1500);
  });
});

describe('a file read a batch of features at a time', () => {
  // 300 records, the 201st unreadable, all in the reader's first chunk.
  const records = Array.from({ length: 300 }, (_, i) => i);
  it.each([
    {
      format: 'GeoJSONSeq (a malformed record)',
      name: 'cut.geojsonl',
      text: `${records.map((i) => (i === 200 ? '{"type":"Feature",' : JSON.stringify(feature(i + 1)))).join('\n')}\n`,
      names: records.slice(0, 200).map((i) => `p\t${i + 1}`),
      failure: { code: 'malformed_json', message: expect.stringMatching(/line 201\b/) },
    },
    {
      format: 'CSV (coordinates that are not numbers)',
      name: 'cut.csv',
      text: `name,lon,lat\n${records.map((i) => `p${i + 1},${i === 200 ? 'east' : i},${-i}`).join('\n')}\n`,
      names: records.slice(0, 200).map((i) => `p${i + 1}`),
      failure: { code: 'invalid_coordinates', message: expect.stringMatching(/^Line 202:/) },
    },
  ])('$format: gives the features before the unreadable one, then fails naming its line', async (c) => {
    // Prepare
    const path = tmp.file(c.name, c.text);
    const read: SourceFeature[] = [];
    let failure: unknown;

    // Act: the reader itself (the reader thread's side of readRows)
    try {
      for await (const f of readInThread(path, c.name, 'cut')) read.push(f);
    } catch (error) {
      failure = error;
    }

    // Assess
    expect(read.map((f) => f.properties.name)).toEqual(c.names);
    expect(failure).toMatchObject(c.failure);
  });
});

describe("a batch of features made from a reader's items (featureBatch)", () => {
  const make = (i: number) =>
    i % 3 === 0 ? undefined : ({ properties: { i }, geometry: null } as SourceFeature);

  it('makes one batch, leaving out the items without a feature', () => {
    expect([...featureBatch([1, 2, 3, 4], make)].map((b) => b.map((f) => f.properties.i))).toEqual([
      [1, 2, 4],
    ]);
    expect([...featureBatch([3, 6], make)]).toEqual([]);
  });

  it('gives the features before an item that fails, then its error', () => {
    // Prepare
    const got: number[][] = [];
    const read = featureBatch([1, 2, 3, 4, 5], (i) => {
      if (i === 5) throw new Error('item 5');
      return make(i);
    });

    // Act / Assess
    expect(() => {
      for (const batch of read) got.push(batch.map((f) => f.properties.i as number));
    }).toThrow('item 5');
    expect(got).toEqual([[1, 2, 4]]);
  });

  it('makes a batch of at most FEATURES_AT_ONCE at a time, as it is taken (a chunk of thousands is never alive at once)', () => {
    // Prepare: a chunk's worth of items; each call of `read` counted
    const items = Array.from({ length: 2 * FEATURES_AT_ONCE * 3 + 10 }, (_, i) => i);
    let made = 0;
    const batches = featureBatch(items, (i) => {
      made++;
      return make(i);
    });

    // Act: take the first batch, then the rest
    const first = batches.next().value as SourceFeature[];
    const madeForFirst = made;
    const rest = [...batches];

    // Assess: full batches made one by one, every feature once, in order
    expect(first).toHaveLength(FEATURES_AT_ONCE);
    expect(madeForFirst).toBeLessThan(2 * FEATURES_AT_ONCE);
    expect(rest.every((b) => b.length > 0 && b.length <= FEATURES_AT_ONCE)).toBe(true);
    expect([first, ...rest].flat().map((f) => f.properties.i)).toEqual(items.filter((i) => i % 3 !== 0));
  });
});

async function collect2<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
