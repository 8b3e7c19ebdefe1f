import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect, it } from 'vitest';
import {
  describeFeatureSource,
  type FeatureLayer,
  type FeatureSource,
  featureQueryContext,
  itemsStatement,
  readFeatureItem,
  readFeatureItems,
} from '#datasources/feature-items.ts';
import { InvalidInputError, NotFoundError, RuleViolationError } from '#domain/errors.ts';
import { CRS84, type FeatureQuery, parseFeatureQuery, type QueryParams } from '#domain/feature-query.ts';
import { onBothTargets, type SeededTarget } from '../support/seeded-targets.ts';

// The items query core (ADR 0121) on both PostGIS targets: the embedded PostGIS always, Debian's
// PostgreSQL 15 + PostGIS 3 when GEOPLANE_TEST_POSTGRES_URL is set (CI).

type Target = SeededTarget;

const SUFFIX = randomBytes(4).toString('hex');
const TABLE = `fi_${SUFFIX}`;
const MERCATOR_TABLE = `fi_merc_${SUFFIX}`;
const KEYLESS_TABLE = `fi_keyless_${SUFFIX}`;
const COUNT = 2_000;
const EPSG = (code: number) => `http://www.opengis.net/def/crs/EPSG/0/${code}`;

interface Seeded {
  id: number;
  name: string;
  rank: number;
  lon: number;
  lat: number;
  t: string;
}

/** 2,000 points from a fixed-seed generator: ids with gaps, inserted out of order. */
const POINTS: Seeded[] = (() => {
  let s = 20240601;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  const out: Seeded[] = [];
  for (let i = 0; i < COUNT; i++) {
    out.push({
      id: 7 + 3 * i,
      name: `p${i % 50}`,
      rank: i % 10,
      lon: round(-180 + 360 * next()),
      lat: round(-80 + 160 * next()),
      t: new Date(Date.UTC(2020, 0, 1) + i * 3 * 3600_000).toISOString(),
    });
  }
  // Out of insertion order, so id order is the query's doing, not the heap's.
  return out.sort((a, b) => (a.lon < b.lon ? -1 : 1));
})();
const ALL_IDS = POINTS.map((p) => p.id).sort((a, b) => a - b);

async function seed(admin: pg.Pool, demoUser: string): Promise<void> {
  const t = pg.escapeIdentifier(TABLE);
  const m = pg.escapeIdentifier(MERCATOR_TABLE);
  const k = pg.escapeIdentifier(KEYLESS_TABLE);
  const who = pg.escapeIdentifier(demoUser);
  await admin.query(`
    CREATE TABLE public.${t} (id integer PRIMARY KEY, name text, rank integer, t timestamptz,
                              geom geometry(Point, 4326));
    CREATE INDEX ON public.${t} USING gist (geom);
    CREATE TABLE public.${k} (name text, geom geometry(Point, 4326));
    GRANT SELECT ON public.${t}, public.${k} TO ${who};`);
  await admin.query(
    `INSERT INTO public.${t} (id, name, rank, t, geom)
     SELECT id, name, rank, t, ST_SetSRID(ST_MakePoint(lon, lat), 4326)
     FROM unnest($1::int[], $2::text[], $3::int[], $4::timestamptz[], $5::float8[], $6::float8[])
       AS s(id, name, rank, t, lon, lat)`,
    [
      POINTS.map((p) => p.id),
      POINTS.map((p) => p.name),
      POINTS.map((p) => p.rank),
      POINTS.map((p) => p.t),
      POINTS.map((p) => p.lon),
      POINTS.map((p) => p.lat),
    ],
  );
  await admin.query(`
    CREATE TABLE public.${m} AS
      SELECT id, name, ST_Transform(geom, 3857)::geometry(Point, 3857) AS geom FROM public.${t};
    ALTER TABLE public.${m} ADD PRIMARY KEY (id);
    GRANT SELECT ON public.${m} TO ${who};
    ANALYZE public.${t};
    ANALYZE public.${m};`);
}

const tableLayer = (source = TABLE): FeatureLayer => ({
  public_id: source,
  source_layer: source,
  is_sql_view: false,
  dimensions: [{ name: 'time', units: 'ISO8601', extent: '', source_property: 't' }],
  crs_default: 4326,
});

/** Ranks 0–4 only, through the SQL-view path. */
const viewLayer = (): FeatureLayer => ({
  public_id: 'low-ranks',
  source_layer: '_sql_view_',
  is_sql_view: true,
  sql_view: {
    sql: `SELECT id, name, rank, geom FROM public.${TABLE} WHERE rank < 5`,
    geometry_column: 'geom',
    id_column: 'id',
    srid: 4326,
    properties: [
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'string' },
      { name: 'rank', type: 'integer' },
    ],
    read_only: true,
  },
  dimensions: [],
  crs_default: 4326,
});

type Point = { type: 'Point'; coordinates: [number, number] };

/** True when the point is inside the CRS84 box (edges included; a west edge east of the east one wraps). */
function inBox(p: Seeded, [minx, miny, maxx, maxy]: number[]): boolean {
  const lonIn =
    (minx as number) <= (maxx as number)
      ? p.lon >= (minx as number) && p.lon <= (maxx as number)
      : p.lon >= (minx as number) || p.lon <= (maxx as number);
  return lonIn && p.lat >= (miny as number) && p.lat <= (maxy as number);
}

function featureItemsSuite(target: () => Target): void {
  const sources = new Map<string, FeatureSource>();
  const describe$ = async (layer: FeatureLayer) => {
    const key = layer.public_id;
    let s = sources.get(key);
    if (!s) {
      s = await describeFeatureSource(target().demo, layer);
      sources.set(key, s);
    }
    return s;
  };
  const query = async (layer: FeatureLayer, params: QueryParams) => {
    const source = await describe$(layer);
    return { source, query: parseFeatureQuery(params, featureQueryContext(source)) };
  };
  /** Follows `next` from the first page to the last; every page's ids and the page count. */
  const pageThrough = async (layer: FeatureLayer, params: Record<string, string>) => {
    const ids: (string | number)[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 100; guard++) {
      const { source, query: q } = await query(layer, { ...params, ...(cursor ? { next: cursor } : {}) });
      const page = await readFeatureItems(target().demo, source, q, layer.public_id, {
        nextHref: (c) => `items?next=${c}`,
      });
      ids.push(...page.collection.features.map((f) => f.id));
      sizes.push(page.collection.numberReturned);
      expect(page.collection.numberReturned).toBe(page.collection.features.length);
      expect(page.collection).not.toHaveProperty('numberMatched');
      cursor = page.nextCursor;
      if (!cursor) {
        expect(page.collection.links).toEqual([]);
        return { ids, sizes };
      }
      expect(page.collection.links).toEqual([
        { href: `items?next=${cursor}`, rel: 'next', type: 'application/geo+json', title: 'Next page' },
      ]);
    }
    throw new Error('more than 100 pages');
  };

  it('describes the table layer from the catalog: id column, SRID, properties, time, CRSs', async () => {
    const source = await describe$(tableLayer());
    expect(source).toMatchObject({
      kind: 'table',
      schema: 'public',
      table: TABLE,
      geometryColumn: 'geom',
      srid: 4326,
      idColumn: 'id',
      idType: 'integer',
      time: { start: 't' },
    });
    expect(source.properties).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'string' },
      { name: 'rank', type: 'integer' },
      { name: 't', type: 'string' },
    ]);
    expect(source.crs.map((c) => [c.uri, c.latFirst])).toEqual([
      [CRS84, false],
      [EPSG(4326), true],
      [EPSG(3857), false],
    ]);
  });

  it('refuses a table without an id column as unreadable', async () => {
    await expect(describeFeatureSource(target().demo, tableLayer(KEYLESS_TABLE))).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof RuleViolationError && e.reason === 'source_unreadable' && /no id column/.test(e.message),
    );
  });

  it('pages through 2,000 features by 100 following next: every id once, in id order', async () => {
    const { ids, sizes } = await pageThrough(tableLayer(), { limit: '100' });
    expect(ids).toEqual(ALL_IDS);
    expect(sizes).toEqual(Array.from({ length: 20 }, () => 100));
  });

  it('returns CRS84 lon/lat geometries and the row as properties', async () => {
    const { source, query: q } = await query(tableLayer(), { limit: '3' });
    const page = await readFeatureItems(target().demo, source, q, TABLE);
    expect(page.contentCrs).toBe(`<${CRS84}>`);
    const byId = new Map(POINTS.map((p) => [p.id, p]));
    for (const f of page.collection.features) {
      const p = byId.get(f.id as number) as Seeded;
      expect(f.geometry).toEqual({ type: 'Point', coordinates: [p.lon, p.lat] });
      expect(f.properties).toEqual({ id: p.id, name: p.name, rank: p.rank, t: expect.any(String) });
      expect(new Date(f.properties.t as string).toISOString()).toBe(p.t);
    }
    expect(page.collection.features.map((f) => f.id)).toEqual(ALL_IDS.slice(0, 3));
  });

  it.each([
    ['Europe', [-10, 35, 30, 60]],
    ['a thin strip', [-180, -1, 180, 1]],
    ['across the antimeridian', [170, -40, -170, 40]],
    ['the whole world', [-180, -90, 180, 90]],
    ['empty ocean of no point', [0.0001, 0.0001, 0.0002, 0.0002]],
  ])('filters by a CRS84 bbox (%s) exactly as a brute-force check', async (_what, box) => {
    const { ids } = await pageThrough(tableLayer(), { bbox: box.join(','), limit: '1000' });
    const expected = POINTS.filter((p) => inBox(p, box))
      .map((p) => p.id)
      .sort((a, b) => a - b);
    expect(ids).toEqual(expected);
    if (_what !== 'empty ocean of no point') expect(expected.length).toBeGreaterThan(0);
  });

  it('reads a bbox in EPSG:4326 as lat/lon and one in EPSG:3857 through the transform', async () => {
    const box = [-10, 35, 30, 60];
    const expected = POINTS.filter((p) => inBox(p, box))
      .map((p) => p.id)
      .sort((a, b) => a - b);
    const latLon = await pageThrough(tableLayer(), {
      bbox: '35,-10,60,30',
      'bbox-crs': EPSG(4326),
      limit: '10000',
    });
    expect(latLon.ids).toEqual(expected);
    // The same box in EPSG:3857 (closed form), filtering a layer stored in EPSG:4326.
    const x = (lon: number) => (lon * Math.PI * 6378137) / 180;
    const y = (lat: number) => Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)) * 6378137;
    const mercator = await pageThrough(tableLayer(), {
      bbox: [x(-10), y(35), x(30), y(60)].join(','),
      'bbox-crs': EPSG(3857),
      limit: '10000',
    });
    expect(mercator.ids).toEqual(expected);
  });

  it('filters a layer stored in EPSG:3857 by a CRS84 bbox, and serves it in CRS84', async () => {
    const box = [100, -50, 170, 10];
    const expected = POINTS.filter((p) => inBox(p, box))
      .map((p) => p.id)
      .sort((a, b) => a - b);
    const layer = tableLayer(MERCATOR_TABLE);
    const { ids } = await pageThrough(layer, { bbox: box.join(','), limit: '1000' });
    expect(ids).toEqual(expected);
    const { source, query: q } = await query(layer, { limit: '50' });
    expect(source.srid).toBe(3857);
    expect(source.crs.map((c) => c.uri)).toEqual([CRS84, EPSG(4326), EPSG(3857)]);
    const page = await readFeatureItems(target().demo, source, q, MERCATOR_TABLE);
    const byId = new Map(POINTS.map((p) => [p.id, p]));
    for (const f of page.collection.features) {
      const p = byId.get(f.id as number) as Seeded;
      const [lon, lat] = (f.geometry as Point).coordinates;
      expect(lon).toBeCloseTo(p.lon, 6);
      expect(lat).toBeCloseTo(p.lat, 6);
    }
  });

  it('serves crs=EPSG:3857 with the coordinates ST_Transform gives, and says so in Content-Crs', async () => {
    const { source, query: q } = await query(tableLayer(), { crs: EPSG(3857), limit: '200' });
    const page = await readFeatureItems(target().demo, source, q, TABLE);
    expect(page.contentCrs).toBe(`<${EPSG(3857)}>`);
    const { rows } = await target().admin.query<{ id: number; x: number; y: number }>(
      `SELECT id, ST_X(g) AS x, ST_Y(g) AS y FROM (SELECT id, ST_Transform(geom, 3857) AS g FROM public.${pg.escapeIdentifier(TABLE)}) s WHERE id = ANY($1::int[])`,
      [page.collection.features.map((f) => f.id)],
    );
    const expected = new Map(rows.map((r) => [r.id, [r.x, r.y]]));
    expect(page.collection.features).toHaveLength(200);
    for (const f of page.collection.features) {
      const [x, y] = (f.geometry as Point).coordinates;
      const [ex, ey] = expected.get(f.id as number) as [number, number];
      expect(Math.abs(x - ex)).toBeLessThan(1e-6);
      expect(Math.abs(y - ey)).toBeLessThan(1e-6);
      expect(Math.abs(x)).toBeGreaterThan(0);
    }
  });

  it('serves crs=EPSG:4326 latitude first (Part 2 axis order)', async () => {
    const { source, query: q } = await query(tableLayer(), { crs: EPSG(4326), limit: '100' });
    const page = await readFeatureItems(target().demo, source, q, TABLE);
    expect(page.contentCrs).toBe(`<${EPSG(4326)}>`);
    const byId = new Map(POINTS.map((p) => [p.id, p]));
    for (const f of page.collection.features) {
      const p = byId.get(f.id as number) as Seeded;
      expect((f.geometry as Point).coordinates).toEqual([p.lat, p.lon]);
    }
  });

  it('filters by property equality, alone and with a bbox, across pages', async () => {
    const rank3 = await pageThrough(tableLayer(), { rank: '3', limit: '37' });
    expect(rank3.ids).toEqual(
      POINTS.filter((p) => p.rank === 3)
        .map((p) => p.id)
        .sort((a, b) => a - b),
    );
    const box = [-90, -45, 90, 45];
    const both = await pageThrough(tableLayer(), { name: 'p13', bbox: box.join(','), limit: '5' });
    const expected = POINTS.filter((p) => p.name === 'p13' && inBox(p, box))
      .map((p) => p.id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect(both.ids).toEqual(expected);
  });

  it('filters by datetime on the time dimension (instant, closed and open intervals)', async () => {
    const within = (from?: string, to?: string) =>
      POINTS.filter((p) => (!from || p.t >= from) && (!to || p.t <= to))
        .map((p) => p.id)
        .sort((a, b) => a - b);
    const closed = await pageThrough(tableLayer(), {
      datetime: '2020-01-10T00:00:00Z/2020-01-20T00:00:00Z',
      limit: '10000',
    });
    expect(closed.ids).toEqual(within('2020-01-10T00:00:00.000Z', '2020-01-20T00:00:00.000Z'));
    expect(closed.ids.length).toBe(81);
    const open = await pageThrough(tableLayer(), { datetime: '../2020-01-02T00:00:00Z', limit: '10000' });
    expect(open.ids).toEqual(within(undefined, '2020-01-02T00:00:00.000Z'));
    const instant = await pageThrough(tableLayer(), { datetime: (POINTS[5] as Seeded).t });
    expect(instant.ids).toEqual([(POINTS[5] as Seeded).id]);
  });

  it('pages the SQL-view layer the same way, through the SQL gate', async () => {
    const { ids, sizes } = await pageThrough(viewLayer(), { limit: '100' });
    expect(ids).toEqual(
      POINTS.filter((p) => p.rank < 5)
        .map((p) => p.id)
        .sort((a, b) => a - b),
    );
    expect(sizes).toEqual(Array.from({ length: 10 }, () => 100));
    const box = [-10, 35, 30, 60];
    const filtered = await pageThrough(viewLayer(), { bbox: box.join(','), rank: '2', limit: '10' });
    expect(filtered.ids).toEqual(
      POINTS.filter((p) => p.rank === 2 && inBox(p, box))
        .map((p) => p.id)
        .sort((a, b) => a - b),
    );
  });

  it('refuses a SQL view the gate refuses, before it runs', async () => {
    const layer = viewLayer();
    const source = {
      ...(await describe$(layer)),
      sql: 'SELECT id, pg_sleep(10) AS geom FROM public.places',
    } as FeatureSource;
    const q = parseFeatureQuery({}, featureQueryContext(source));
    await expect(readFeatureItems(target().demo, source, q, 'bad')).rejects.toSatisfy(
      (e: unknown) => e instanceof RuleViolationError && e.reason === 'source_unreadable',
    );
  });

  it('reads a single feature by id, in CRS84 and EPSG:3857', async () => {
    const source = await describe$(tableLayer());
    const p = POINTS[42] as Seeded;
    const one = await readFeatureItem(target().demo, source, String(p.id), TABLE);
    expect(one).toEqual({
      feature: {
        type: 'Feature',
        id: p.id,
        geometry: { type: 'Point', coordinates: [p.lon, p.lat] },
        properties: { id: p.id, name: p.name, rank: p.rank, t: expect.any(String) },
      },
      contentCrs: `<${CRS84}>`,
    });
    const mercator = source.crs.find((c) => c.srid === 3857);
    const projected = await readFeatureItem(target().demo, source, String(p.id), TABLE, mercator);
    expect(projected.contentCrs).toBe(`<${EPSG(3857)}>`);
    expect((projected.feature.geometry as Point).coordinates[0]).toBeCloseTo(
      (p.lon * Math.PI * 6378137) / 180,
      3,
    );
    const view = await readFeatureItem(target().demo, await describe$(viewLayer()), String(ALL_IDS[0]), 'v');
    expect(view.feature.id).toBe(ALL_IDS[0]);
  });

  it.each([
    ['an id that does not exist', '8'],
    ['a word for an integer id', 'abc'],
    ['an id beyond the integer range', '99999999999999999999'],
    ['a NUL (%00)', decodeURIComponent('7%00')],
    ['an empty id', ''],
  ])('answers NotFound for %s', async (_what, id) => {
    const source = await describe$(tableLayer());
    await expect(readFeatureItem(target().demo, source, id, TABLE)).rejects.toSatisfy(
      (e: unknown) => e instanceof NotFoundError && e.reason === 'feature_not_found',
    );
  });

  it('answers 400 (not 500) when a filter value or the cursor does not fit the column', async () => {
    const source = await describe$(tableLayer());
    const base: FeatureQuery = { ...parseFeatureQuery({}, featureQueryContext(source)) };
    const tooBig = { ...base, filters: [{ name: 'rank', value: '99999999999' }] };
    await expect(readFeatureItems(target().demo, source, tooBig, TABLE)).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    const wrongCursor = { ...base, after: 'not-an-integer' };
    await expect(readFeatureItems(target().demo, source, wrongCursor, TABLE)).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });

  it('seeks page 15 by key: no OFFSET, and the scan reads one page of rows as page 1 does', async () => {
    const source = await describe$(tableLayer());
    const ctx = featureQueryContext(source);
    const first = itemsStatement(source, parseFeatureQuery({ limit: '100' }, ctx));
    // Page 15 starts after the 1,400th id.
    const after = String(ALL_IDS[1399]);
    const q15 = parseFeatureQuery({ limit: '100' }, ctx);
    const fifteenth = itemsStatement(source, { ...q15, after });
    for (const s of [first, fifteenth]) expect(s.text).not.toMatch(/\bOFFSET\b/i);
    expect(fifteenth.text).toMatch(/"id" > \$\d+/);
    const rowsRead = async (s: { text: string; values: unknown[] }) => {
      const { rows } = await target().admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, s.values);
      const plan = (rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
      return maxScanRows(plan);
    };
    const firstRows = await rowsRead(first);
    const fifteenthRows = await rowsRead(fifteenth);
    // An OFFSET 1400 would read 1,501 rows; a seek reads the page and the one after.
    expect(firstRows).toBeLessThanOrEqual(101);
    expect(fifteenthRows).toBeLessThanOrEqual(101);
    const page = await readFeatureItems(target().demo, source, { ...q15, after }, TABLE);
    expect(page.collection.features.map((f) => f.id)).toEqual(ALL_IDS.slice(1400, 1500));
  });
}

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The most rows any scan node of the plan read. */
function maxScanRows(node: PlanNode): number {
  const own = /Scan/.test(node['Node Type']) ? node['Actual Rows'] * (node['Actual Loops'] ?? 1) : 0;
  return Math.max(own, ...(node.Plans ?? []).map(maxScanRows));
}

onBothTargets('embedded PostGIS (PGlite)', seed, featureItemsSuite);
