import { randomBytes } from 'node:crypto';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  parseTile,
  type RenderedTile,
  renderTile,
  type TileAddress,
  type TileLayerSource,
  type TileOptions,
} from '#datasources/vector-tiles.ts';
import { InvalidInputError, NotFoundError, RuleViolationError } from '#domain/errors.ts';
import { REAL_POSTGRES_URL } from '../support/real-postgres.ts';
import { onBothTargets, type SeededTarget } from '../support/seeded-targets.ts';

// Vector tiles on both PostGIS targets (ADR 0119): the embedded PostGIS (no protobuf-c, so the
// TypeScript encoder) and, when GEOPLANE_TEST_POSTGRES_URL is set (CI), Debian's PostgreSQL 15 +
// PostGIS 3, where ST_AsMVT is compared with the TypeScript path forced on the same data.

type Target = SeededTarget;

const TABLE = `vt_${randomBytes(4).toString('hex')}`;
const PROPERTIES = ['id', 'name', 'rank', 'ratio', 'flag', 'meta', 'tags', 'born', 'nothing'];

/** Seeds the test table (points, lines, polygons with properties) readable by the demo role. */
async function seed(admin: pg.Pool, demoUser: string): Promise<void> {
  const t = pg.escapeIdentifier(TABLE);
  // A line across z0 with 400 vertices 9.7 grid units apart, zigzagging by ~0.9 units at 60°S
  // (0.04° × sec 60°): snapped to the grid the zigzag stays, simplified by 1 unit it goes.
  const wiggle = Array.from({ length: 400 }, (_, i) => `${-170 + i * 0.85} ${-60 + (i % 2) * 0.04}`).join(
    ', ',
  );
  await admin.query(`
    CREATE TABLE public.${t} (
      id integer PRIMARY KEY, name text, rank integer, ratio double precision, flag boolean,
      meta jsonb, tags text[], born date, nothing text, geom geometry(Geometry, 4326));
    INSERT INTO public.${t} VALUES
      (1, 'Paris', 1, 1.5, true, '{"a": 1}', '{a,b}', '2020-01-02', NULL, 'SRID=4326;POINT(2.3522 48.8566)'),
      (2, 'Lima', -3, 0.25, false, NULL, NULL, NULL, NULL, 'SRID=4326;POINT(-77.0428 -12.0464)'),
      (3, 'Tokyo', 3, 2.0, true, NULL, NULL, NULL, NULL, 'SRID=4326;POINT(139.6917 35.6895)'),
      (4, 'Nairobi', 4, -1.75, false, NULL, NULL, NULL, NULL, 'SRID=4326;POINT(36.8219 -1.2921)'),
      (5, 'Perth', 5, 5.5, true, NULL, NULL, NULL, NULL, 'SRID=4326;MULTIPOINT((115.8605 -31.9505), (115.9 -31.9))'),
      (10, 'Meridian road', 10, 0.5, true, NULL, NULL, NULL, NULL,
        'SRID=4326;LINESTRING(-20 10, -5 12, 5 14, 20 16)'),
      (11, 'Wiggle', 11, 0.5, false, NULL, NULL, NULL, NULL, 'SRID=4326;LINESTRING(${wiggle})'),
      (12, 'Two roads', 12, 0.5, false, NULL, NULL, NULL, NULL,
        'SRID=4326;MULTILINESTRING((100 -10, 110 -5), (120 -10, 130 -5))'),
      (20, 'Straddle', 20, 3.25, true, '[1, 2]', NULL, NULL, NULL,
        'SRID=4326;POLYGON((-10 0, 10 0, 10 20, -10 20, -10 0), (-5 5, -5 15, 5 15, 5 5, -5 5))'),
      (21, 'Islands', 21, 0.5, false, NULL, NULL, NULL, NULL,
        'SRID=4326;MULTIPOLYGON(((150 -40, 155 -40, 155 -35, 150 -35, 150 -40)), ((160 -45, 165 -45, 162 -40, 160 -45)))'),
      (22, 'Big south', 22, 0.5, false, NULL, NULL, NULL, NULL,
        'SRID=4326;POLYGON((-60 -89, 60 -89, 60 -70, -60 -70, -60 -89))'),
      (30, 'No geometry', 30, 0.5, false, NULL, NULL, NULL, NULL, NULL);
    GRANT SELECT ON public.${t} TO ${pg.escapeIdentifier(demoUser)};`);
}

const tableSource = (): Extract<TileLayerSource, { kind: 'table' }> => ({
  kind: 'table',
  schema: 'public',
  table: TABLE,
  name: 'mixed',
  geometryColumn: 'geom',
  srid: 4326,
  idColumn: 'id',
  properties: PROPERTIES,
});

/** Points only, through the SQL-view path (the guard and the read-only runner of validate-sql). */
const pointsView = (): Extract<TileLayerSource, { kind: 'sql' }> => ({
  kind: 'sql',
  sql: `SELECT id, name, geom FROM public.${TABLE} WHERE GeometryType(geom) IN ('POINT', 'MULTIPOINT')`,
  name: 'points',
  geometryColumn: 'geom',
  srid: 4326,
  idColumn: 'id',
  properties: ['id', 'name'],
});

/** The value, or a failed test when it is missing. */
function must<T>(value: T | undefined | null): T {
  if (value === undefined || value === null) throw new Error('expected a value');
  return value;
}

interface DecodedFeature {
  id: number | undefined;
  type: number;
  properties: Record<string, unknown>;
  geometry: { x: number; y: number }[][];
}

/** Decodes a tile with @mapbox/vector-tile: layer name → features, in tile order. */
function decode(bytes: Uint8Array): Record<string, { extent: number; features: DecodedFeature[] }> {
  const tile = new VectorTile(new PbfReader(bytes));
  const out: Record<string, { extent: number; features: DecodedFeature[] }> = {};
  for (const [name, layer] of Object.entries(tile.layers)) {
    const features: DecodedFeature[] = [];
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      features.push({
        id: f.id,
        type: f.type,
        properties: { ...f.properties },
        geometry: f.loadGeometry().map((ring) => ring.map((p) => ({ x: p.x, y: p.y }))),
      });
    }
    out[name] = { extent: layer.extent, features };
  }
  return out;
}

/** The tile of a lon/lat at zoom z, and the point's position on its 4096 grid. */
function tileOf(lon: number, lat: number, z: number) {
  const n = 2 ** z;
  const fx = ((lon + 180) / 360) * n;
  const r = (lat * Math.PI) / 180;
  const fy = ((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n;
  const x = Math.floor(fx);
  const y = Math.floor(fy);
  return { z, x, y, px: (fx - x) * 4096, py: (fy - y) * 4096 };
}

function distanceToSegment(
  p: { x: number; y: number },
  a: { x: number; y: number },
  b: { x: number; y: number },
) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = dx * dx + dy * dy;
  const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / len));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

/** Largest distance from a vertex of `a` to the shape of `b` (points, lines or closed rings). */
function directedDistance(a: DecodedFeature, b: DecodedFeature): number {
  let worst = 0;
  for (const p of a.geometry.flat()) {
    let best = Number.POSITIVE_INFINITY;
    for (const ring of b.geometry) {
      const closed = b.type === 3 && ring.length > 0 ? [...ring, ring[0] as { x: number; y: number }] : ring;
      if (closed.length === 1)
        best = Math.min(best, Math.hypot(p.x - must(closed[0]).x, p.y - must(closed[0]).y));
      for (let i = 1; i < closed.length; i++) {
        best = Math.min(best, distanceToSegment(p, must(closed[i - 1]), must(closed[i])));
      }
    }
    worst = Math.max(worst, best);
  }
  return worst;
}

/** Signed area (surveyor's formula, tile coordinates) of every ring, summed. */
function area(f: DecodedFeature): number {
  let sum = 0;
  for (const ring of f.geometry) {
    for (let i = 0; i < ring.length; i++) {
      const p = must(ring[i]);
      const q = must(ring[(i + 1) % ring.length]);
      sum += p.x * q.y - q.x * p.y;
    }
  }
  return sum / 2;
}

/**
 * Asserts two tiles are the same tile: layer names, feature count, ids, geometry types,
 * properties, and geometries within 1 unit of the grid (both ways), polygon areas within 1%.
 */
function expectSameTile(a: RenderedTile, b: RenderedTile): void {
  expect(a.features).toBe(b.features);
  expect(a.truncated).toBe(b.truncated);
  const da = decode(a.bytes);
  const db = decode(b.bytes);
  expect(Object.keys(da)).toEqual(Object.keys(db));
  for (const [name, layer] of Object.entries(da)) {
    const other = must(db[name]);
    expect(layer.extent).toBe(other.extent);
    expect(layer.features.map((f) => [f.id, f.type, f.properties])).toEqual(
      other.features.map((f) => [f.id, f.type, f.properties]),
    );
    layer.features.forEach((f, i) => {
      const g = must(other.features[i]);
      expect(directedDistance(f, g), `feature ${f.id}, a to b`).toBeLessThanOrEqual(1);
      expect(directedDistance(g, f), `feature ${f.id}, b to a`).toBeLessThanOrEqual(1);
      if (f.type === 3) {
        expect(Math.abs(area(f) - area(g)), `feature ${f.id}, area`).toBeLessThanOrEqual(
          Math.abs(area(g)) * 0.01 + 64,
        );
      }
    });
  }
}

const WORLD = { z: 0, x: 0, y: 0 };
const PARIS = tileOf(2.3522, 48.8566, 5);
const WEST = { z: 1, x: 0, y: 0 };
const EAST = { z: 1, x: 1, y: 0 };
const EMPTY = tileOf(-150, -40, 10);
const TILES: [string, TileAddress][] = [
  ['the z0 world tile', WORLD],
  ['a mid-zoom tile (z5, Paris)', PARIS],
  ['the west side of the lon 0 tile boundary (z1)', WEST],
  ['the east side of the lon 0 tile boundary (z1)', EAST],
  ['an empty tile (z10, South Pacific)', EMPTY],
];

/** Tiles rendered per target and encoder, for the cross-target comparison at the end. */
const rendered = new Map<string, RenderedTile>();

function vectorTileSuite(target: () => Target): void {
  const render = async (
    address: TileAddress,
    options: TileOptions = {},
    source: TileLayerSource = tableSource(),
  ) => {
    const t = target();
    const tile = await renderTile(t.demo, source, address, options);
    rendered.set(
      `${t.kind}:${tile.encoder}:${source.name}:${JSON.stringify(address)}:${JSON.stringify(options)}`,
      tile,
    );
    return tile;
  };

  it('picks ST_AsMVT where PostGIS has protobuf-c and the TypeScript encoder where it has not', async () => {
    const t = target();
    const auto = await render(WORLD);
    expect(auto.encoder).toBe(t.kind === 'postgresql' ? 'postgis' : 'typescript');
    if (t.kind === 'embedded') {
      await expect(render(WORLD, { encoder: 'postgis' })).rejects.toSatisfy(
        (e: unknown) => e instanceof RuleViolationError && e.reason === 'mvt_unsupported',
      );
    }
    expect(await render(WORLD, { encoder: 'typescript' })).toMatchObject({ encoder: 'typescript' });
  });

  it('renders the world tile with every feature, its id, geometry type and normalised properties', async () => {
    const tile = await render(WORLD);
    const layers = decode(tile.bytes);
    expect(Object.keys(layers)).toEqual(['mixed']);
    const features = must(layers.mixed).features;
    expect(must(layers.mixed).extent).toBe(4096);
    expect(tile).toMatchObject({ features: 11, truncated: false });
    expect(features.map((f) => [f.id, f.type])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 1],
      [10, 2],
      [11, 2],
      [12, 2],
      [20, 3],
      [21, 3],
      [22, 3],
    ]);
    expect(must(features[0]).properties).toEqual({
      id: 1,
      name: 'Paris',
      rank: 1,
      ratio: 1.5,
      flag: true,
      meta: '{"a": 1}',
      tags: '["a", "b"]',
      born: '2020-01-02',
    });
    expect(must(features[1]).properties).toMatchObject({ rank: -3, ratio: 0.25, flag: false });
    expect(must(features[8]).properties).toMatchObject({ name: 'Straddle', meta: '[1, 2]', ratio: 3.25 });
    // Polygon exterior rings have positive area in tile coordinates (MVT 2.1), holes negative.
    const straddle = must(features[8]);
    expect(straddle.geometry).toHaveLength(2);
    expect(area({ ...straddle, geometry: [must(straddle.geometry[0])] })).toBeGreaterThan(0);
    expect(area({ ...straddle, geometry: [must(straddle.geometry[1])] })).toBeLessThan(0);
  });

  it('places a point where Web Mercator puts it on the tile grid (mid zoom)', async () => {
    const tile = await render(PARIS);
    const features = must(decode(tile.bytes).mixed).features;
    expect(features.map((f) => f.properties.name)).toEqual(['Paris']);
    const [point] = must(features[0]).geometry.flat();
    expect(Math.abs(must(point).x - PARIS.px)).toBeLessThanOrEqual(1);
    expect(Math.abs(must(point).y - PARIS.py)).toBeLessThanOrEqual(1);
  });

  it.each([
    ['west', WEST, 4096 + 64, 'max'],
    ['east', EAST, -64, 'min'],
  ] as const)(
    'clips a polygon across a tile boundary to the buffered tile (%s side)',
    async (_, address, edge, side) => {
      const features = must(decode((await render(address)).bytes).mixed).features;
      const straddle = features.find((f) => f.properties.name === 'Straddle');
      const xs = must(straddle)
        .geometry.flat()
        .map((p) => p.x);
      expect(side === 'max' ? Math.max(...xs) : Math.min(...xs)).toBe(edge);
      // The road crossing lon 0 is in both tiles, clipped the same way.
      const road = features.find((f) => f.properties.name === 'Meridian road');
      const roadXs = must(road)
        .geometry.flat()
        .map((p) => p.x);
      expect(side === 'max' ? Math.max(...roadXs) : Math.min(...roadXs)).toBe(edge);
    },
  );

  it('renders an empty tile as zero bytes and zero features', async () => {
    expect(await render(EMPTY)).toMatchObject({ bytes: new Uint8Array(0), features: 0, truncated: false });
  });

  it.each([
    ['a column beyond 2^z', { z: 1, x: 2, y: 0 }],
    ['a row beyond 2^z', { z: 3, x: 0, y: 8 }],
    ['a zoom beyond 24', { z: 25, x: 0, y: 0 }],
    ['a negative row', { z: 2, x: 0, y: '-1' }],
  ])('answers NotFoundError (404) for %s', async (_, address) => {
    await expect(render(address)).rejects.toSatisfy(
      (e: unknown) => e instanceof NotFoundError && e.reason === 'tile_not_found',
    );
  });

  it.each([
    ['a word', { z: 'a', x: 0, y: 0 }],
    ['a fraction', { z: 2, x: '1.5', y: 0 }],
    ['an empty segment', { z: 2, x: 0, y: '' }],
    ['NaN', { z: Number.NaN, x: 0, y: 0 }],
    ['a fractional number', { z: 2, x: 0.5, y: 0 }],
  ])('answers InvalidInputError (400) for %s', async (_, address) => {
    await expect(render(address as TileAddress)).rejects.toSatisfy(
      (e: unknown) => e instanceof InvalidInputError && e.reason === 'invalid_tile',
    );
  });

  describe('budget', () => {
    it('keeps the first maxFeatures features by id and marks the tile truncated', async () => {
      const tile = await render(WORLD, { maxFeatures: 3 });
      expect(tile).toMatchObject({ features: 3, truncated: true });
      expect(must(decode(tile.bytes).mixed).features.map((f) => f.id)).toEqual([1, 2, 3]);
      expect(await render(WORLD, { maxFeatures: 11 })).toMatchObject({ features: 11, truncated: false });
    });

    it('shrinks to a prefix by id that fits maxBytes, down to an empty tile', async () => {
      const full = await render(WORLD, {}, pointsView());
      expect(full).toMatchObject({ features: 5, truncated: false });
      const maxBytes = Math.floor(full.bytes.length * 0.6);
      const cut = await render(WORLD, { maxBytes }, pointsView());
      expect(cut.bytes.length).toBeLessThanOrEqual(maxBytes);
      expect(cut.truncated).toBe(true);
      expect(cut.features).toBeGreaterThan(0);
      expect(cut.features).toBeLessThan(5);
      expect(must(decode(cut.bytes).points).features.map((f) => f.id)).toEqual(
        [1, 2, 3, 4, 5].slice(0, cut.features),
      );
      expect(await render(WORLD, { maxBytes: 10 }, pointsView())).toMatchObject({
        bytes: new Uint8Array(0),
        features: 0,
        truncated: true,
      });
    });
  });

  it('simplifies by zoom: fewer vertices at z0 with the default tolerance than with none', async () => {
    const count = async (simplify: number) => {
      const features = must(decode((await render(WORLD, { simplify })).bytes).mixed).features;
      return must(features.find((f) => f.properties.name === 'Wiggle')).geometry.flat().length;
    };
    const simplified = await count(1);
    const raw = await count(0);
    expect(simplified).toBeLessThan(raw / 4);
    expect(simplified).toBeGreaterThanOrEqual(2);
  });

  it('refuses a SQL view the guard refuses, and reports a missing table as unreadable', async () => {
    const sleepy: TileLayerSource = {
      ...pointsView(),
      sql: 'SELECT id, geom, pg_sleep(1) FROM public.places',
    };
    await expect(render(WORLD, {}, sleepy)).rejects.toSatisfy(
      (e: unknown) => e instanceof RuleViolationError && e.reason === 'source_unreadable',
    );
    const missing: TileLayerSource = { ...tableSource(), table: `${TABLE}_missing` };
    await expect(render(WORLD, {}, missing)).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof RuleViolationError &&
        e.reason === 'source_unreadable' &&
        /does not exist/.test(e.message),
    );
  });
}

describe('parseTile', () => {
  it('accepts path segments and numbers alike', () => {
    expect(parseTile({ z: '3', x: '7', y: 0 })).toEqual({ z: 3, x: 7, y: 0 });
  });
});

onBothTargets('embedded PostGIS (PGlite, no protobuf-c)', seed, vectorTileSuite, (target) => {
  describe('ST_AsMVT and the TypeScript encoder give the same tiles on the same data', () => {
    it.each(TILES)('%s', async (_, address) => {
      const t = target();
      const native = await renderTile(t.demo, tableSource(), address, { encoder: 'postgis' });
      const typescript = await renderTile(t.demo, tableSource(), address, { encoder: 'typescript' });
      expect(native.encoder).toBe('postgis');
      expect(typescript.encoder).toBe('typescript');
      expectSameTile(native, typescript);
    });

    it.each([
      ['maxFeatures', { maxFeatures: 4 }, tableSource],
      ['no simplification', { simplify: 0 }, tableSource],
      ['a buffer of 0 and extent 512', { buffer: 0, extent: 512 }, tableSource],
    ] as const)('with %s', async (_, options, source) => {
      const t = target();
      const native = await renderTile(t.demo, source(), WORLD, { ...options, encoder: 'postgis' });
      const typescript = await renderTile(t.demo, source(), WORLD, { ...options, encoder: 'typescript' });
      expectSameTile(native, typescript);
    });

    it('with maxBytes: the same prefix of points fits on both paths', async () => {
      const t = target();
      const full = await renderTile(t.demo, pointsView(), WORLD, { encoder: 'postgis' });
      const maxBytes = Math.floor(full.bytes.length * 0.6);
      const native = await renderTile(t.demo, pointsView(), WORLD, { maxBytes, encoder: 'postgis' });
      const typescript = await renderTile(t.demo, pointsView(), WORLD, { maxBytes, encoder: 'typescript' });
      expect(native).toMatchObject({ truncated: true, features: expect.any(Number) });
      expect(native.features).toBeGreaterThan(0);
      expectSameTile(native, typescript);
    });

    it('the sizes of the two encodings are equal for points (same ids, values, commands)', async () => {
      const t = target();
      const native = await renderTile(t.demo, pointsView(), WORLD, { encoder: 'postgis' });
      const typescript = await renderTile(t.demo, pointsView(), WORLD, { encoder: 'typescript' });
      expect(native.bytes.length).toBe(typescript.bytes.length);
    });

    it('auto-detection is cached per server: the probe answers the same the second time', async () => {
      const t = target();
      const first = await renderTile(t.demo, tableSource(), WORLD);
      const second = await renderTile(t.demo, tableSource(), WORLD);
      expect([first.encoder, second.encoder]).toEqual(['postgis', 'postgis']);
    });
  });
});

const url = REAL_POSTGRES_URL;

describe.skipIf(!url)('the embedded PostGIS and PostgreSQL give the same tiles', () => {
  it.each(TILES)('%s', (_, address) => {
    const key = (kind: string, encoder: string) => `${kind}:${encoder}:mixed:${JSON.stringify(address)}:{}`;
    const embedded = rendered.get(key('embedded', 'typescript'));
    const native = rendered.get(key('postgresql', 'postgis'));
    expect(embedded, 'the embedded target rendered it').toBeDefined();
    expect(native, 'PostgreSQL rendered it').toBeDefined();
    expectSameTile(embedded as RenderedTile, native as RenderedTile);
  });
});
