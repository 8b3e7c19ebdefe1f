import { afterAll, describe, expect, it } from 'vitest';
import { discover } from '#datasources/imports/formats/index.ts';
import { geometryInfo } from '#datasources/imports/formats/scan.ts';
import { geometryText } from '#datasources/imports/geometry-text.ts';
import type { ImportJob } from '#domain/import-model.ts';
import { presentImport } from '#domain/import-model.ts';
import type { SourceGeometry } from '#domain/import-sources.ts';
import { tempDir } from '../fixtures/imports/support.ts';

/**
 * Discovery's `geometry_dims` (ADR 0143): when every geometry of a layer is of one type and all are
 * 2D or all 3D as the loader will write them, the staging table takes the final typmod up front
 * and the finalize rewrites nothing. So discovery's Z must be the WKB writer's Z, geometry by
 * geometry, and it is set only where the loader writes the geometries itself.
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const feature = (geometry: unknown) => ({ type: 'Feature', properties: {}, geometry });
const collection = (geometries: unknown[]) =>
  JSON.stringify({ type: 'FeatureCollection', features: geometries.map(feature) });
const line = (...positions: number[][]) => ({ type: 'LineString', coordinates: positions });
const square = (z?: number) => ({
  type: 'Polygon',
  coordinates: [
    [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ].map((p) => (z === undefined ? p : [...p, z])),
  ],
});

let files = 0;
/** The discovered layer's geometry_dims of a FeatureCollection of these geometries. */
const dimsOf = async (geometries: unknown[]) => {
  const name = `layer${++files}.geojson`;
  const path = tmp.file(name, collection(geometries));
  const discovery = await discover(path, name);
  return discovery.layers[0]?.geometry_dims;
};

describe("discovery's geometry_dims", () => {
  it.each([
    [
      '2D points, a null geometry among them',
      [{ type: 'Point', coordinates: [1, 2] }, null, { type: 'Point', coordinates: [3, 4] }],
      2,
    ],
    [
      '3D points',
      [
        { type: 'Point', coordinates: [1, 2, 3] },
        { type: 'Point', coordinates: [3, 4, 5] },
      ],
      3,
    ],
    // Lines and polygons come packed from the file's bytes.
    ['3D lines (packed)', [line([0, 0, 1], [1, 1, 2]), line([2, 2, 3], [3, 3, 4])], 3],
    ['2D polygons (packed)', [square(), square()], 2],
    ['3D polygons (packed)', [square(5), square(6)], 3],
    [
      'an empty point among 2D points (written 2D, as NaN NaN)',
      [
        { type: 'Point', coordinates: [] },
        { type: 'Point', coordinates: [1, 2] },
      ],
      2,
    ],
  ])('is set for %s', async (_, geometries, dims) => {
    expect(await dimsOf(geometries)).toBe(dims);
  });

  it.each([
    ['2D and 3D lines', [line([0, 0], [1, 1]), line([0, 0, 1], [1, 1, 1])]],
    [
      '2D and 3D points',
      [
        { type: 'Point', coordinates: [1, 2] },
        { type: 'Point', coordinates: [1, 2, 3] },
      ],
    ],
    [
      'an empty point among 3D points',
      [
        { type: 'Point', coordinates: [1, 2, 3] },
        { type: 'Point', coordinates: [] },
      ],
    ],
    [
      'Polygons and MultiPolygons (loaded as MultiPolygon)',
      [square(), { type: 'MultiPolygon', coordinates: [square().coordinates] }],
    ],
    [
      'GeometryCollections',
      [{ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }] }],
    ],
    ['no geometry at all', [null, null]],
  ])('is not set for %s', async (_, geometries) => {
    expect(await dimsOf(geometries)).toBeUndefined();
  });

  it('is set for GeoJSONSeq and CSV lon/lat points, not for CSV WKT (it goes to PostGIS as it is)', async () => {
    // Prepare
    const seq = tmp.file(
      'seq.geojsonl',
      `${JSON.stringify(feature({ type: 'Point', coordinates: [1, 2, 3] }))}\n`,
    );
    const wkt = tmp.file('wkt.csv', 'id,wkt\n1,POINT(1 2)\n2,POINT(3 4)\n');
    const lonLat = tmp.file('lonlat.csv', 'id,lon,lat\n1,1,2\n2,3,4\n');

    // Act
    const [a, b, c] = await Promise.all([
      discover(seq, 'seq.geojsonl'),
      discover(wkt, 'wkt.csv'),
      discover(lonLat, 'lonlat.csv'),
    ]);

    // Assess
    expect(a.layers[0]).toMatchObject({ geometry_type: 'Point', geometry_dims: 3 });
    expect(b.layers[0]).toMatchObject({ geometry_type: 'Point' });
    expect(b.layers[0]?.geometry_dims).toBeUndefined();
    expect(c.layers[0]).toMatchObject({ geometry_type: 'Point', geometry_dims: 2 });
  });
});

describe("discovery's Z is the WKB writer's", () => {
  const Z_FLAG = 0x80000000;
  /** Whether the hex WKB's type word has the Z flag (the form the writer uses). */
  const writtenZ = (g: unknown) =>
    (Buffer.from(geometryText(g as SourceGeometry), 'hex').readUInt32LE(1) & Z_FLAG) !== 0;

  it.each([
    { type: 'Point', coordinates: [1, 2] },
    { type: 'Point', coordinates: [1, 2, 3] },
    { type: 'Point', coordinates: [1, 2, 3, 4] },
    { type: 'Point', coordinates: [] },
    line([0, 0], [1, 1, 5]),
    line([0, 0, 5], [1, 1, 6]),
    { type: 'MultiPoint', coordinates: [] },
    { type: 'MultiPoint', coordinates: [[1, 2, 3]] },
    { type: 'Polygon', coordinates: [] },
    square(),
    square(2),
    { type: 'MultiPolygon', coordinates: [square(1).coordinates] },
    {
      type: 'MultiLineString',
      coordinates: [
        [],
        [
          [0, 0, 1],
          [1, 1, 1],
        ],
      ],
    },
    { type: 'GeometryCollection', geometries: [] },
    {
      type: 'GeometryCollection',
      geometries: [line([0, 0, 1], [1, 1, 1]), { type: 'Point', coordinates: [1, 2] }],
    },
    { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, square(3)] },
  ])('for %j', (g) => {
    expect(geometryInfo(g, 'feature 0').z).toBe(writtenZ(g));
  });
});

describe('the API', () => {
  it("does not present a discovered layer's geometry_dims or geometry_valid", () => {
    // Prepare
    const layer = {
      name: 'a',
      fields: [],
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 1,
      bbox: null,
    } as const;
    const job = {
      id: 'j',
      status: 'awaiting_plan',
      discovery: {
        format: 'geojson',
        size_bytes: 10,
        layers: [{ ...layer, geometry_dims: 2, geometry_valid: true }],
        warnings: [],
      },
    } as unknown as ImportJob;

    // Act
    const shown = presentImport(job);

    // Assess
    expect(shown.discovery?.layers).toEqual([layer]);
    expect(job.discovery?.layers[0]?.geometry_dims).toBe(2);
    expect(job.discovery?.layers[0]?.geometry_valid).toBe(true);
  });
});
