import { afterAll, describe, expect, it } from 'vitest';
import { discover } from '#datasources/imports/formats/index.ts';
import { CoordinatePacker } from '#datasources/imports/formats/packed-coordinates.ts';
import {
  certainlyValid,
  certainlyValidParsed,
  MAX_RING_POSITIONS,
  orientation,
} from '#datasources/imports/formats/validity.ts';
import type { GeometryType } from '#domain/import-sources.ts';
import { BOWTIE_RING, tempDir } from '../fixtures/imports/support.ts';

/**
 * Geometries certainly valid for PostGIS (validity.ts), judged from their coordinates: "true" must
 * never be said of a geometry ST_IsValid rejects (the integration suite checks that against
 * PostGIS itself); anything it can't be sure of is "false", and the finalize asks PostGIS.
 */

type Ring = [number, number][];

/** Both ways the loader may hold the coordinates: packed from the bytes, and parsed. */
function judged(type: GeometryType, coordinates: unknown): boolean {
  const parsed = certainlyValidParsed(type, coordinates);
  const item = JSON.stringify({ type: 'Feature', properties: {}, geometry: { type, coordinates } });
  const bytes = Buffer.from(item);
  const packer = new CoordinatePacker();
  const [packs] = packer.items(bytes, [{ from: 0, end: bytes.length }]);
  const spans = packer.done();
  if (packs && spans[0]) expect(certainlyValid(type, spans[0].coordinates)).toBe(parsed);
  return parsed;
}

const polygon = (...rings: Ring[]) => judged('Polygon', rings);
const square: Ring = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
  [0, 0],
];

describe('orientation', () => {
  it('tells turns apart and calls collinear (or too close to tell) zero', () => {
    expect(orientation(0, 0, 1, 0, 1, 1)).toBe(1);
    expect(orientation(0, 0, 1, 0, 1, -1)).toBe(-1);
    expect(orientation(0, 0, 1, 1, 2, 2)).toBe(0);
    // Collinear in exact arithmetic, but not in the rounded products: the bound calls it zero.
    expect(orientation(0.1, 0.1, 0.2, 0.2, 0.30000000000000004, 0.30000000000000004)).toBe(0);
    expect(orientation(0, 0, 1e-100, 0, 1e-100, 1e-100)).toBe(1);
    // Products in the subnormal range lose the relative error bound: never told.
    expect(orientation(0, 0, 1e-160, 0, 1e-160, 1e-160)).toBe(0);
    expect(orientation(0, 0, 1e200, 0, 1e200, 1e200)).toBe(0);
  });
});

describe('certainly valid', () => {
  it('says so of simple rings, either way round, and of points and lines', () => {
    expect(polygon(square)).toBe(true);
    expect(polygon([...square].reverse())).toBe(true);
    expect(
      polygon([
        [0, 0],
        [4, 0],
        [4, 4],
        [2, 1],
        [0, 4],
        [0, 0],
      ]),
    ).toBe(true);
    expect(judged('Point', [1, 2])).toBe(true);
    expect(
      judged('MultiPoint', [
        [1, 2],
        [1, 2],
      ]),
    ).toBe(true);
    expect(
      judged('LineString', [
        [1, 2],
        [1, 2],
        [3, 4],
      ]),
    ).toBe(true);
    expect(
      judged('MultiPolygon', [
        [square],
        [
          [
            [2, 2],
            [3, 2],
            [3, 3],
            [2, 2],
          ],
        ],
      ]),
    ).toBe(true);
  });

  it('does not say so of invalid or doubtful geometries', () => {
    const cases: [string, GeometryType, unknown][] = [
      ['a bow-tie', 'Polygon', [BOWTIE_RING]],
      [
        'a ring touching itself at a vertex',
        'Polygon',
        [
          [
            [0, 0],
            [4, 0],
            [2, 2],
            [4, 4],
            [0, 4],
            [2, 2],
            [0, 0],
          ],
        ],
      ],
      [
        'a vertex on another segment',
        'Polygon',
        [
          [
            [0, 0],
            [4, 0],
            [4, 4],
            [2, 0],
            [0, 4],
            [0, 0],
          ],
        ],
      ],
      [
        'a spike (a segment doubling back)',
        'Polygon',
        [
          [
            [0, 0],
            [2, 0],
            [4, 0],
            [2, 0],
            [2, 2],
            [0, 0],
          ],
        ],
      ],
      [
        'a collapsed ring',
        'Polygon',
        [
          [
            [0, 0],
            [1, 1],
            [2, 2],
            [0, 0],
          ],
        ],
      ],
      [
        'an open ring',
        'Polygon',
        [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      ],
      [
        'too few positions',
        'Polygon',
        [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      ],
      [
        'a repeated position (valid, but not judged)',
        'Polygon',
        [
          [
            [0, 0],
            [1, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      ],
      [
        'a straight vertex (valid, but not judged)',
        'Polygon',
        [
          [
            [0, 0],
            [1, 0],
            [2, 0],
            [2, 2],
            [0, 0],
          ],
        ],
      ],
      [
        'a hole (not judged)',
        'Polygon',
        [
          [
            [0, 0],
            [10, 0],
            [10, 10],
            [0, 10],
            [0, 0],
          ],
          [
            [1, 1],
            [2, 1],
            [2, 2],
            [1, 1],
          ],
        ],
      ],
      [
        'parts whose boxes touch',
        'MultiPolygon',
        [
          [square],
          [
            [
              [1, 0],
              [2, 0],
              [2, 1],
              [1, 0],
            ],
          ],
        ],
      ],
      ['overlapping parts', 'MultiPolygon', [[square], [square]]],
      [
        'a line of one repeated position',
        'LineString',
        [
          [1, 1],
          [1, 1],
        ],
      ],
      ['a collection (not judged)', 'GeometryCollection', []],
    ];
    for (const [name, type, coordinates] of cases)
      expect([name, judged(type, coordinates)]).toEqual([name, false]);
  });

  it('leaves rings longer than it judges to PostGIS, and parsed coordinates that are not numbers', () => {
    // A regular polygon of MAX_RING_POSITIONS and of one more position.
    const regular = (n: number): Ring => {
      const ring: Ring = [];
      for (let k = 0; k < n - 1; k++)
        ring.push([Math.cos((2 * Math.PI * k) / (n - 1)), Math.sin((2 * Math.PI * k) / (n - 1))]);
      ring.push(ring[0] as [number, number]);
      return ring;
    };
    expect(polygon(regular(MAX_RING_POSITIONS))).toBe(true);
    expect(polygon(regular(MAX_RING_POSITIONS + 1))).toBe(false);
    expect(
      certainlyValidParsed('Polygon', [
        [
          [0, 0],
          [1, 0],
          ['1', 1],
          [0, 0],
        ],
      ]),
    ).toBe(false);
    expect(certainlyValidParsed('Point', [Number.NaN, 0])).toBe(false);
    // A point's own path (it is never packed): finite x and y, nothing else.
    expect(certainlyValidParsed('Point', [1, 2])).toBe(true);
    expect(certainlyValidParsed('Point', [1, 2, 3])).toBe(true);
    expect(certainlyValidParsed('Point', [0, Number.POSITIVE_INFINITY])).toBe(false);
    expect(certainlyValidParsed('Point', ['1', 2])).toBe(false);
    expect(certainlyValidParsed('Point', [1])).toBe(false);
    expect(certainlyValidParsed('Point', [])).toBe(false);
    expect(certainlyValidParsed('Point', null)).toBe(false);
    expect(certainlyValidParsed('Point', [[1, 2]])).toBe(false);
  });
});

describe('discovery marks a layer whose every geometry is certainly valid', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  const write = (name: string, geometries: unknown[]) => {
    const features = geometries.map((geometry) => ({ type: 'Feature', properties: {}, geometry }));
    return dir.file(name, JSON.stringify({ type: 'FeatureCollection', features }));
  };

  it('sets geometry_valid for GeoJSON of valid polygons, and not when one of them is doubtful', async () => {
    // Prepare
    const valid = Array.from({ length: 50 }, (_, i) => ({
      type: 'Polygon',
      coordinates: [square.map(([x, y]) => [x + 2 * i, y])],
    }));
    const bowtie = { type: 'Polygon', coordinates: [BOWTIE_RING] };
    const good = write('good.geojson', valid);
    const bad = write('bad.geojson', [...valid, bowtie]);
    // Judging stops at the first doubtful geometry; the layer stays unmarked.
    const badFirst = write('bad-first.geojson', [bowtie, ...valid]);

    // Act
    const [goodLayer] = (await discover(good, 'good.geojson')).layers;
    const [badLayer] = (await discover(bad, 'bad.geojson')).layers;
    const [badFirstLayer] = (await discover(badFirst, 'bad-first.geojson')).layers;

    // Assess
    expect(goodLayer?.geometry_valid).toBe(true);
    expect(badLayer?.geometry_type).toBe('Polygon');
    expect(badLayer?.geometry_valid).toBeUndefined();
    expect(badFirstLayer?.feature_count).toBe(51);
    expect(badFirstLayer?.geometry_valid).toBeUndefined();
  });
});
