import { afterAll, describe, expect, it } from 'vitest';
import { discover } from '#datasources/imports/formats/index.ts';
import { CoordinatePacker, type PackedCoordinates } from '#datasources/imports/formats/packed-coordinates.ts';
import { tempDir } from '../fixtures/imports/support.ts';

/**
 * Packed coordinates (packed-coordinates.ts) are read from a feature's bytes instead of by
 * JSON.parse. They must be exactly JSON.parse's numbers, bit for bit, in the same nesting — and
 * whatever is not the plain case must be left to JSON.parse (items() says false).
 */

/** Packs the coordinates of one feature item's text; undefined when the packer leaves it alone. */
function pack(item: string): PackedCoordinates | undefined {
  const bytes = Buffer.from(`  ${item}  `);
  const packer = new CoordinatePacker();
  const [packed] = packer.items(bytes, [{ from: 2, end: bytes.length - 2 }]);
  const spans = packer.done();
  expect(spans).toHaveLength(packed ? 1 : 0);
  if (!packed) return undefined;
  const span = spans[0];
  // The span is exactly the coordinates array's text.
  expect(JSON.parse(bytes.toString('utf8', span?.start, span?.stop))).toEqual(
    (JSON.parse(item) as { geometry: { coordinates: unknown } }).geometry.coordinates,
  );
  return span?.coordinates;
}

/** Every number as its 64 bits, so -0 and 0 (and any last-bit difference) tell apart. */
function bits(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(bits);
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value as number);
  return b.toString('hex');
}

const collection = (features: string[]) => `{"type":"FeatureCollection","features":[${features.join(',')}]}`;

const feature = (coordinates: string, type = 'Polygon') =>
  `{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"${type}","coordinates":${coordinates}}}`;

describe('packed coordinates', () => {
  it.each([
    ['a polygon with a hole', '[[[0,0],[10,0],[10,10],[0,0]],[[1,1],[2,1],[1,2],[1,1]]]', 2, 2],
    ['a 3D line', '[[1.5,2.5,3.5],[4,5,6]]', 1, 3],
    [
      'a multipolygon',
      '[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]],[[5.1,5.1],[5.2,5.1],[5.1,5.2],[5.1,5.1]]]]',
      3,
      2,
    ],
    ['white space everywhere', '[ [ [ 0 , 1 ] ,\n\t[ 2 ,3 ] \r\n] ]', 2, 2],
    ['numbers in every JSON form', '[[-0,0],[1e2,1E-2],[1.5e+3,-2.5E-3],[0.000001,-123456.789012345]]', 1, 2],
    [
      'more digits than a double holds',
      '[[1.00000000000000011102230246251565,-179.99999999999999999],[12345678901234567890,2e-400]]',
      1,
      2,
    ],
    ['exponents beyond the fast path', '[[1e23,1e-23],[4.9e-324,1.7976931348623157e308]]', 1, 2],
  ])('reads %s exactly as JSON.parse does', (_, coordinates, nesting, dims) => {
    const packed = pack(feature(coordinates));
    expect(packed?.nesting).toBe(nesting);
    expect(packed?.dims).toBe(dims);
    expect(bits(packed?.unpack())).toEqual(bits(JSON.parse(coordinates)));
  });

  it('reads 20,000 random numbers, written as JavaScript and GDAL write them, to the same bits as JSON.parse', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const texts: string[] = [];
    for (let k = 0; k < 20_000; k++) {
      const scale = 10 ** Math.floor(random() * 24 - 12);
      const x = (random() - 0.5) * 360 * scale;
      const form = k % 5;
      texts.push(
        form === 0
          ? String(x)
          : form === 1
            ? x.toFixed(Math.floor(random() * 16))
            : form === 2
              ? x.toExponential(Math.floor(random() * 17))
              : form === 3
                ? x.toPrecision(15)
                : x.toExponential(8).replace('e', 'E'),
      );
    }
    const pairs = [];
    for (let k = 0; k < texts.length; k += 2) pairs.push(`[${texts[k]},${texts[k + 1]}]`);
    const coordinates = `[${pairs.join(',')}]`;
    const packed = pack(feature(coordinates, 'LineString'));
    expect(bits(packed?.unpack())).toEqual(bits(JSON.parse(coordinates)));
  });

  it('gives the bbox of the positions', () => {
    expect(pack(feature('[[[3,-1,9],[-2,4,9],[0,0,-50],[3,-1,9]]]'))?.box()).toEqual([-2, -1, 3, 4]);
  });

  it.each([
    ['a Point (one position: JSON.parse is cheaper)', feature('[1,2]', 'Point')],
    ['an empty list', feature('[[]]')],
    ['an empty geometry', feature('[]')],
    ['lists nested unevenly', feature('[[[0,0],[1,1]],[2,2]]')],
    ['a position of 4 numbers', feature('[[1,2,3,4],[1,2,3,4]]', 'LineString')],
    ['2D and 3D positions mixed', feature('[[1,2],[1,2,3]]', 'LineString')],
    ['a position of 1 number', feature('[[1],[2]]', 'LineString')],
    ['a string among the numbers', feature('[[1,"2"],[3,4]]', 'LineString')],
    ['null among the numbers', feature('[[1,null],[3,4]]', 'LineString')],
    ['a trailing comma', feature('[[1,2],[3,4],]', 'LineString')],
    ['a missing comma', feature('[[1,2] [3,4]]', 'LineString')],
    ['a leading comma', feature('[[,1,2],[3,4]]', 'LineString')],
    ['a number JSON does not allow (leading zero)', feature('[[01,2],[3,4]]', 'LineString')],
    ['a number JSON does not allow (bare dot)', feature('[[1.,2],[3,4]]', 'LineString')],
    ['a number JSON does not allow (plus sign)', feature('[[+1,2],[3,4]]', 'LineString')],
    ['a number JSON does not allow (no exponent digits)', feature('[[1e,2],[3,4]]', 'LineString')],
    ['a number that is not finite', feature('[[1e400,2],[3,4]]', 'LineString')],
    ['nesting deeper than any geometry', feature('[[[[[[[[[[1,2]]]]]]]]]]')],
    [
      'two coordinates keys',
      '{"type":"Feature","properties":{"coordinates":[[1,2]]},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}',
    ],
    ['no coordinates', '{"type":"Feature","properties":{},"geometry":null}'],
  ])('leaves %s to JSON.parse', (_, item) => {
    expect(pack(item)).toBeUndefined();
  });

  it('packs the items of a chunk into one store, each its own range, and starts clean after done()', () => {
    const items = [feature('[[0,0],[1,1]]', 'LineString'), feature('[[2,2],[3,3],[4,4]]', 'LineString')];
    const bytes = Buffer.from(items.join(','));
    const packer = new CoordinatePacker();
    const first = (items[0] as string).length;
    expect(
      packer.items(bytes, [
        { from: 0, end: first },
        { from: first + 1, end: bytes.length },
      ]),
    ).toEqual([true, true]);
    const [a, b] = packer.done();
    expect(a?.coordinates.values).toBe(b?.coordinates.values);
    expect([a?.coordinates.unpack(), b?.coordinates.unpack()]).toEqual([
      [
        [0, 0],
        [1, 1],
      ],
      [
        [2, 2],
        [3, 3],
        [4, 4],
      ],
    ]);
    // A refused item leaves nothing behind.
    const refused = Buffer.from(feature('[[1,2],[3]]', 'LineString'));
    expect(packer.items(refused, [{ from: 0, end: refused.length }])).toEqual([false]);
    expect(packer.done()).toEqual([]);
  });
});

describe('packing the items of a chunk', () => {
  const spans = (texts: string[]) => {
    const bytes = Buffer.from(texts.join(',\n'));
    const items: { from: number; end: number }[] = [];
    let at = 0;
    for (const t of texts) {
      items.push({ from: at, end: at + t.length });
      at += t.length + 2;
    }
    return { bytes, items };
  };

  it('finds each item its own key, whatever the items before it held', () => {
    const { bytes, items } = spans([
      feature('[[0,0],[1,1]]', 'LineString'),
      '{"type":"Feature","properties":{"coordinates":[[9,9]]},"geometry":{"type":"LineString","coordinates":[[2,2],[3,3]]}}',
      '{"type":"Feature","properties":{},"geometry":null}',
      feature('[[4,4],[5,5]]', 'LineString'),
    ]);
    const packer = new CoordinatePacker();
    expect(packer.items(bytes, items)).toEqual([true, false, false, true]);
    expect(packer.done().map((span) => span.coordinates.unpack())).toEqual([
      [
        [0, 0],
        [1, 1],
      ],
      [
        [4, 4],
        [5, 5],
      ],
    ]);
  });

  it('gives up on a chunk whose first 16 items have nothing to pack', () => {
    const points = Array.from({ length: 16 }, (_, i) => feature(`[${i},${i}]`, 'Point'));
    const lines = Array.from({ length: 4 }, (_, i) => feature(`[[${i},0],[0,${i}]]`, 'LineString'));
    const packer = new CoordinatePacker();
    const late = spans([...points, ...lines]);
    expect(packer.items(late.bytes, late.items).filter(Boolean)).toHaveLength(0);
    const early = spans([...points.slice(1), ...lines]);
    expect(packer.items(early.bytes, early.items).filter(Boolean)).toHaveLength(4);
  });
});

describe('discovery of packed geometries', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('finds the type and bbox JSON.parse gives, over many chunks', async () => {
    // Prepare: 2.5 MB of multipolygons with a hole, some 3D
    const features = Array.from({ length: 6000 }, (_, i) => {
      const x = ((i * 37) % 340) - 170 + i / 1e5;
      const y = ((i * 13) % 160) - 80 - i / 1e6;
      const ring = [
        [x, y],
        [x + 0.5, y],
        [x + 0.5, y + 0.5],
        [x, y],
      ].map((p) => (i % 3 === 0 ? [...p, i] : p));
      return {
        type: 'Feature',
        properties: { i },
        geometry: { type: 'MultiPolygon', coordinates: [[ring]] },
      };
    });
    const path = tmp.file('multi.geojson', JSON.stringify({ type: 'FeatureCollection', features }));
    const xs = features.flatMap((f) => f.geometry.coordinates[0]?.[0]?.map((p) => p[0] as number) ?? []);
    const ys = features.flatMap((f) => f.geometry.coordinates[0]?.[0]?.map((p) => p[1] as number) ?? []);

    // Act
    const found = await discover(path, 'multi.geojson');

    // Assess
    expect(found.layers[0]?.geometry_type).toBe('MultiPolygon');
    expect(found.layers[0]?.feature_count).toBe(6000);
    expect(found.layers[0]?.bbox).toEqual([
      Math.min(...xs),
      Math.min(...ys),
      Math.max(...xs),
      Math.max(...ys),
    ]);
  });

  it('reads a feature whose one coordinates key is in its properties as JSON.parse does', async () => {
    // Prepare: the packer takes the property's array; the parse finds no stand-in in the geometry
    const decoy = (properties: string, geometry: string) =>
      `{"type":"Feature","properties":{"coordinates":${properties}},"geometry":${geometry}}`;
    const path = tmp.file(
      'decoy.geojson',
      collection([decoy('[[1,2],[3,4]]', 'null'), decoy('[[5,6]]', '{"type":"Point","coordinates":[1,2]}')]),
    );

    // Act
    const found = await discover(path, 'decoy.geojson');

    // Assess: the property stays an array (jsonb), not the stand-in's number
    expect(found.layers[0]?.fields).toEqual([{ name: 'coordinates', type: 'jsonb' }]);
    expect(found.layers[0]?.bbox).toEqual([1, 2, 1, 2]);
  });

  it('measures a geometry nested unlike its type as the parsed arrays are measured', async () => {
    // Prepare: the second polygon's coordinates are a line's (packed, one level short)
    const path = tmp.file(
      'nested.geojson',
      collection([feature('[[[0,0],[1,0],[0,1],[0,0]]]'), feature('[[5,5],[6,7]]')]),
    );

    // Act
    const found = await discover(path, 'nested.geojson');

    // Assess: as before packing, discovery measures it (the load refuses its shape)
    expect(found.layers[0]?.geometry_type).toBe('Polygon');
    expect(found.layers[0]?.bbox).toEqual([0, 0, 6, 7]);
  });
});
