import { describe, expect, it } from 'vitest';
import wkx from 'wkx';
import { GeometryShapeError, geometryText } from '#datasources/imports/geometry-text.ts';
import type { SourceGeometry } from '#domain/import-sources.ts';

/**
 * The loader writes a GeoJSON geometry as hex WKB itself (geometry-text.ts). Its bytes are read
 * back here by another reader (wkx's WKB parser) and must be the geometry the GeoJSON says; what
 * it refuses, it refuses with the shape error the loader reports for the feature.
 */
const square = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
  [0, 0],
];
const hole = [
  [0.2, 0.2],
  [0.2, 0.4],
  [0.4, 0.4],
  [0.2, 0.2],
];
const z = (ring: number[][], h: number) => ring.map(([x, y]) => [x, y, h]);

/** The WKT another reader finds in the hex WKB. */
const readBack = (hex: string) => wkx.Geometry.parse(Buffer.from(hex, 'hex')).toWkt();
const text = (g: unknown) => geometryText(g as SourceGeometry);

describe('geometryText of GeoJSON: hex WKB', () => {
  it.each([
    [{ type: 'Point', coordinates: [1.5, -2.25] }, 'POINT(1.5 -2.25)'],
    [{ type: 'Point', coordinates: [1.5, -2.25, 7] }, 'POINT Z (1.5 -2.25 7)'],
    [{ type: 'Point', coordinates: [1, 2, 3, 4] }, 'POINT Z (1 2 3)'],
    [
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [3, 4],
        ],
      },
      'LINESTRING(0 0,3 4)',
    ],
    [{ type: 'LineString', coordinates: [] }, 'LINESTRING EMPTY'],
    [
      { type: 'Polygon', coordinates: [square, hole] },
      'POLYGON((0 0,1 0,1 1,0 1,0 0),(0.2 0.2,0.2 0.4,0.4 0.4,0.2 0.2))',
    ],
    [{ type: 'Polygon', coordinates: [z(square, 5)] }, 'POLYGON Z ((0 0 5,1 0 5,1 1 5,0 1 5,0 0 5))'],
    [{ type: 'Polygon', coordinates: [] }, 'POLYGON EMPTY'],
    [{ type: 'Polygon', coordinates: [[]] }, 'POLYGON EMPTY'],
    [
      {
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      },
      'MULTIPOINT(1 2,3 4)',
    ],
    [
      {
        type: 'MultiLineString',
        coordinates: [
          [
            [0, 0],
            [1, 1],
          ],
          [
            [2, 2],
            [3, 3, 9],
          ],
        ],
      },
      'MULTILINESTRING((0 0,1 1),(2 2,3 3))',
    ],
    [
      {
        type: 'MultiPolygon',
        coordinates: [[square], [z(square, 1).map(([x, y]) => [(x as number) + 2, y])]],
      },
      'MULTIPOLYGON(((0 0,1 0,1 1,0 1,0 0)),((2 0,3 0,3 1,2 1,2 0)))',
    ],
    [{ type: 'MultiPolygon', coordinates: [] }, 'MULTIPOLYGON EMPTY'],
    [
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [1, 2, 3] },
          {
            type: 'LineString',
            coordinates: [
              [0, 0, 1],
              [1, 1, 2],
            ],
          },
        ],
      },
      'GEOMETRYCOLLECTION Z (POINT Z (1 2 3),LINESTRING Z (0 0 1,1 1 2))',
    ],
    [
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'GeometryCollection', geometries: [{ type: 'MultiPoint', coordinates: [[5, 6]] }] },
        ],
      },
      'GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(MULTIPOINT(5 6)))',
    ],
    [{ type: 'GeometryCollection', geometries: [] }, 'GEOMETRYCOLLECTION EMPTY'],
  ])('%j reads back as %s', (geometry, wkt) => {
    expect(readBack(text(geometry))).toBe(wkt);
  });

  it('writes an empty point as NaN coordinates (POINT EMPTY to PostGIS)', () => {
    const bytes = Buffer.from(text({ type: 'Point', coordinates: [] }), 'hex');
    expect(bytes.length).toBe(21);
    expect(Number.isNaN(bytes.readDoubleLE(5)) && Number.isNaN(bytes.readDoubleLE(13))).toBe(true);
  });

  it('writes exactly the doubles of the coordinates, little-endian, Z flagged as PostGIS does', () => {
    const bytes = Buffer.from(text({ type: 'Point', coordinates: [0.1 + 0.2, -1e-300, 12345.678] }), 'hex');
    expect(bytes[0]).toBe(1);
    expect(bytes.readUInt32LE(1)).toBe(0x80000001);
    expect([bytes.readDoubleLE(5), bytes.readDoubleLE(13), bytes.readDoubleLE(21)]).toEqual([
      0.1 + 0.2,
      -1e-300,
      12345.678,
    ]);
  });

  it('gives the same text for a geometry written after a much larger one (the buffer is reused)', () => {
    const big = Array.from({ length: 200_000 }, (_, i) => [i, -i]);
    const small = {
      type: 'LineString',
      coordinates: [
        [1, 1],
        [2, 2],
      ],
    };
    const before = text(small);
    expect(readBack(text({ type: 'LineString', coordinates: big })).length).toBeGreaterThan(1_000_000);
    expect(text(small)).toBe(before);
    expect(readBack(before)).toBe('LINESTRING(1 1,2 2)');
  });

  it.each([
    [{ type: 'Curve', coordinates: [] }, 'unknown geometry type "Curve"'],
    [{ coordinates: [1, 2] }, 'unknown geometry type undefined'],
    [{ type: 'toString', coordinates: [1, 2] }, 'unknown geometry type "toString"'],
    [{ type: 'Point' }, 'Point without coordinates'],
    [{ type: 'Point', coordinates: [1] }, 'a position with fewer than 2 numbers'],
    [{ type: 'Point', coordinates: [1, 'x'] }, 'a position that is not numbers: [1,"x"]'],
    [{ type: 'Point', coordinates: [1, 2, null] }, 'a position that is not numbers: [1,2,null]'],
    [{ type: 'LineString', coordinates: [1, 2] }, 'coordinates nested too shallowly'],
    [{ type: 'Polygon', coordinates: [[[0, 0], [1]], 5] }, 'a position with fewer than 2 numbers'],
    [
      { type: 'Polygon', coordinates: [[], square] },
      'a polygon with an empty exterior ring and an interior ring',
    ],
    [{ type: 'MultiPolygon', coordinates: [square] }, 'coordinates nested too shallowly'],
    [
      {
        type: 'LineString',
        coordinates: [
          [0, 0, 1],
          [1, 1],
        ],
      },
      'a position without Z in a geometry whose first position has Z',
    ],
    [{ type: 'GeometryCollection' }, 'GeometryCollection without geometries'],
    [{ type: 'GeometryCollection', geometries: [null] }, 'a null member geometry'],
  ])('refuses %j: %s', (geometry, message) => {
    expect(() => text(geometry)).toThrow(new GeometryShapeError(message));
  });

  it('refuses collections nested more than 32 deep', () => {
    let g: unknown = { type: 'Point', coordinates: [0, 0] };
    for (let i = 0; i < 33; i++) g = { type: 'GeometryCollection', geometries: [g] };
    expect(() => text(g)).toThrow(new GeometryShapeError('geometry collections nested too deeply'));
    expect(readBack(text((g as { geometries: unknown[] }).geometries[0]))).toMatch(/^GEOMETRYCOLLECTION/);
  });

  it('passes WKB as hex and WKT as given', () => {
    expect(geometryText({ wkb: new Uint8Array([1, 2, 255]) })).toBe('0102ff');
    expect(geometryText({ wkt: 'POINT(1 2)' })).toBe('POINT(1 2)');
    expect(() => geometryText({ wkb: new Uint8Array() })).toThrow(GeometryShapeError);
    expect(() => geometryText({ wkt: ' ' })).toThrow(GeometryShapeError);
  });
});
