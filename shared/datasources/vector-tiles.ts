/**
 * Mapbox Vector Tiles (MVT 2.1) of a PostGIS layer in the WebMercatorQuad tile matrix set, the
 * same tile from either PostGIS target (ADR 0119): PostGIS encodes it with ST_AsMVT where it has
 * protobuf-c; where it hasn't (the embedded PostGIS), the tile-space geometry is computed in SQL
 * the way ST_AsMVTGeom does and the tile is encoded here with `@maplibre/vt-pbf`.
 *
 * Every read runs through the guarded read-only path of postgis-sessions.ts (`readOnly`: READ ONLY
 * transaction, statement budget, client-side deadline); a SQL view passes the SQL gate first.
 */
import { fromVectorTileJs, type VectorTileFeatureLike, type VectorTileLayerLike } from '@maplibre/vt-pbf';
import { InvalidInputError, NotFoundError, RuleViolationError } from '#domain/errors.ts';
import { escapeIdentifier, isDatabaseError } from './pg-driver.ts';
import type { PostgisConnection } from './postgis.ts';
import { BudgetExceededError, type ReadOnlyQuery, readOnly } from './postgis-sessions.ts';
import { hiddenCallRefusal, subquery } from './postgis-sql-views.ts';
import { checkSql } from './sql-guard.ts';

/** Where a layer's features come from: a table (or view) of the service, or a SQL view. */
export type TileLayerSource = (
  | { kind: 'table'; schema: string; table: string }
  | { kind: 'sql'; sql: string }
) & {
  /** The MVT layer name (the collection id, the layer's `public_id`). */
  name: string;
  geometryColumn: string;
  /** The SRID the geometries are in (the layer's; a geometry stored with SRID 0 is read as this). */
  srid: number;
  /** Orders features (the budget keeps the first ones); a non-negative integer id is the MVT feature id. */
  idColumn: string;
  /** Columns written as feature properties, in this order ([] for none). */
  properties: readonly string[];
};

/** A tile of WebMercatorQuad as the caller gave it: numbers, or path segments as text. */
export interface TileAddress {
  z: number | string;
  x: number | string;
  y: number | string;
}

/** How a tile is made; every field has a default. */
export interface TileOptions {
  /** Tile grid size (MVT extent); default 4096. */
  extent?: number;
  /** Grid units kept around the tile so shapes and labels don't seam; default 64. */
  buffer?: number;
  /** At most this many features per tile (the first ones by id); default {@link DEFAULT_MAX_FEATURES}. */
  maxFeatures?: number;
  /** At most this many bytes per tile (fewer features kept, see renderTile); default {@link DEFAULT_MAX_BYTES}. */
  maxBytes?: number;
  /** Douglas–Peucker tolerance in grid units, applied in EPSG:3857 so it scales with the zoom; 0 = none; default 1. */
  simplify?: number;
  /** The statement budget of the whole tile; default {@link TILE_BUDGET_MS}. */
  budgetMs?: number;
  /** `auto` (default) asks the server once; the others force a path (tests, diagnostics). */
  encoder?: 'auto' | TileEncoder;
}

/** Who encoded the tile: PostGIS (ST_AsMVT) or this module (vt-pbf). */
export type TileEncoder = 'postgis' | 'typescript';

/** A rendered tile. `bytes` is empty when no feature is in the tile. */
export interface RenderedTile {
  bytes: Uint8Array;
  /** Features in the tile. */
  features: number;
  /** True when the budget left out features that are in the tile. */
  truncated: boolean;
  encoder: TileEncoder;
}

/** The deepest tile matrix of WebMercatorQuad (OGC 17-083r4 defines 0–24). */
export const MAX_ZOOM = 24;
export const DEFAULT_EXTENT = 4096;
export const DEFAULT_BUFFER = 64;
export const DEFAULT_MAX_FEATURES = 10_000;
/** 500 KiB: the size above which clients and CDNs start to suffer. */
export const DEFAULT_MAX_BYTES = 500 * 1024;
export const DEFAULT_SIMPLIFY = 1;
/** The statement budget of one tile. */
export const TILE_BUDGET_MS = 5_000;

/** Half the side of the EPSG:3857 square (π × 6378137 m). */
const HALF_WORLD = Math.PI * 6378137;
const EARTH_RADIUS = 6378137;
/** What ST_AsMVT does with a jsonb number this close to an integer: it encodes the integer. */
const FLT_EPSILON = 1.1920928955078125e-7;
const INT64_LIMIT = 2 ** 63;

/** A validated tile of WebMercatorQuad. */
export interface Tile {
  z: number;
  x: number;
  y: number;
}

/**
 * Checks a tile address: a part that is not an integer is malformed (InvalidInputError
 * `invalid_tile`, 400); an integer outside the matrix set — zoom beyond {@link MAX_ZOOM}, a
 * negative part, a column or row ≥ 2^z — is a tile that does not exist (NotFoundError
 * `tile_not_found`, 404, as OGC API Tiles wants).
 */
export function parseTile(address: TileAddress): Tile {
  const part = (name: 'z' | 'x' | 'y'): number => {
    const raw = address[name];
    const text = typeof raw === 'number' ? (Number.isFinite(raw) ? String(raw) : '') : String(raw ?? '');
    if (!/^-?\d{1,20}$/.test(text)) {
      throw new InvalidInputError('invalid_tile', `The tile ${name} must be an integer, not '${text}'.`);
    }
    return Number(text);
  };
  const z = part('z');
  const x = part('x');
  const y = part('y');
  const size = 2 ** z;
  if (z < 0 || z > MAX_ZOOM || x < 0 || y < 0 || x >= size || y >= size) {
    throw new NotFoundError(
      'tile_not_found',
      `The tile ${z}/${x}/${y} is outside the WebMercatorQuad tile matrix set (zoom 0–${MAX_ZOOM}, column and row below 2^zoom).`,
    );
  }
  return { z, x, y };
}

/** The tile's EPSG:3857 bounds, computed once here so both paths use the very same numbers. */
export function tileBounds(tile: Tile): { xmin: number; ymin: number; xmax: number; ymax: number } {
  const size = (2 * HALF_WORLD) / 2 ** tile.z;
  return {
    xmin: -HALF_WORLD + tile.x * size,
    xmax: -HALF_WORLD + (tile.x + 1) * size,
    ymin: HALF_WORLD - (tile.y + 1) * size,
    ymax: HALF_WORLD - tile.y * size,
  };
}

interface Resolved {
  extent: number;
  buffer: number;
  maxFeatures: number;
  maxBytes: number;
  simplify: number;
  budgetMs: number;
  encoder: 'auto' | TileEncoder;
}

function resolve(options: TileOptions): Resolved {
  const r: Resolved = {
    extent: options.extent ?? DEFAULT_EXTENT,
    buffer: options.buffer ?? DEFAULT_BUFFER,
    maxFeatures: options.maxFeatures ?? DEFAULT_MAX_FEATURES,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    simplify: options.simplify ?? DEFAULT_SIMPLIFY,
    budgetMs: options.budgetMs ?? TILE_BUDGET_MS,
    encoder: options.encoder ?? 'auto',
  };
  const whole = (n: number, min: number) => Number.isSafeInteger(n) && n >= min;
  if (!whole(r.extent, 1) || !whole(r.buffer, 0) || !whole(r.maxFeatures, 0) || !whole(r.maxBytes, 0)) {
    throw new InvalidInputError(
      'invalid_tile_options',
      'extent, buffer, maxFeatures and maxBytes must be whole numbers.',
    );
  }
  if (!(r.simplify >= 0) || !(r.budgetMs > 0)) {
    throw new InvalidInputError('invalid_tile_options', 'simplify must be ≥ 0 and budgetMs > 0.');
  }
  return r;
}

/** Servers (host:port/database) whose PostGIS answered the ST_AsMVT probe: true when it works. */
const mvtCapability = new Map<string, boolean>();

function serverKey(c: PostgisConnection): string {
  return `${c.host}:${c.port}/${c.database}`;
}

/**
 * THE decision between the two paths: ST_AsMVT where the server's PostGIS encodes MVT (probed
 * once per server, then cached), the TypeScript encoder where it fails (PGlite's PostGIS: "…
 * without protobuf-c support"). The probe runs in a savepoint, so a failing one leaves the
 * transaction usable; a timeout is not a verdict and is not cached.
 */
export async function chooseEncoder(
  c: PostgisConnection,
  query: ReadOnlyQuery,
  wanted: 'auto' | TileEncoder = 'auto',
): Promise<TileEncoder> {
  if (wanted === 'typescript') return 'typescript';
  const key = serverKey(c);
  let capable = mvtCapability.get(key);
  if (capable === undefined) {
    await query('SAVEPOINT mvt_probe');
    try {
      const { rows } = await query<{ ok: boolean }>(
        `SELECT length(ST_AsMVT(t, 'probe', 4096, 'geom')) > 0 AS ok
         FROM (SELECT ST_AsMVTGeom(ST_Point(1, 1), ST_MakeBox2D(ST_Point(0, 0), ST_Point(4096, 4096)), 4096, 0, true) AS geom) t`,
      );
      await query('RELEASE SAVEPOINT mvt_probe');
      capable = rows[0]?.ok === true;
    } catch (error) {
      if (!isDatabaseError(error) || error.code === '57014') throw error;
      await query('ROLLBACK TO SAVEPOINT mvt_probe');
      capable = false;
    }
    mvtCapability.set(key, capable);
  }
  if (wanted === 'postgis' && !capable) {
    throw new RuleViolationError(
      'mvt_unsupported',
      `The PostGIS of ${key} can't encode vector tiles (ST_AsMVT).`,
    );
  }
  return capable ? 'postgis' : 'typescript';
}

/** Forgets the probed capabilities (tests). */
export function forgetMvtCapabilities(): void {
  mvtCapability.clear();
}

/**
 * Renders one tile of a layer: the features whose geometry reaches into the tile (plus its
 * buffer), in tile coordinates on the `extent` grid, with their properties, encoded as MVT by the
 * path {@link chooseEncoder} picks. Both paths produce the same tile up to polygon validation
 * (ADR 0119).
 *
 * Budget: features are taken in id order; past `maxFeatures` the rest are left out and the tile
 * is `truncated`. If the encoded tile is still over `maxBytes`, the kept prefix shrinks in
 * proportion (k ← ⌊k × maxBytes / bytes⌋) and is encoded again until it fits, so the tile holds
 * the first k features by id and is `truncated`. Properties: strings, numbers and booleans as
 * they are, JSON objects and arrays as their JSON text, dates and other types as their text, nulls
 * left out. A feature id is set when the id is an integer from 0 to 2^53 − 1.
 *
 * Throws InvalidInputError (400) for a malformed tile, NotFoundError (404) outside the matrix
 * set, RuleViolationError `source_unreadable` when the source can't be read (or the SQL view is
 * refused) and `query_budget_exceeded` when the tile's SQL overran its budget, UnavailableError
 * (503) when the data source is down.
 */
export async function renderTile(
  c: PostgisConnection,
  source: TileLayerSource,
  address: TileAddress,
  options: TileOptions = {},
): Promise<RenderedTile> {
  const tile = parseTile(address);
  const o = resolve(options);
  let guard: Awaited<ReturnType<typeof checkSql>> | undefined;
  if (source.kind === 'sql') {
    guard = await checkSql(source.sql, c.schemas);
    if (!guard.ok)
      throw new RuleViolationError('source_unreadable', `The SQL view is refused: ${guard.error}`);
  }
  try {
    return await readOnly(c, o.budgetMs, async (query) => {
      if (guard?.ok) {
        const hidden = await hiddenCallRefusal(query, guard);
        if (hidden) throw new RuleViolationError('source_unreadable', `The SQL view is refused: ${hidden}`);
      }
      const encoder = await chooseEncoder(c, query, o.encoder);
      const sql = tileSql(source, tile, o, encoder);
      return encoder === 'postgis'
        ? await encodeInPostgis(query, sql, source.name, o)
        : await encodeHere(query, sql, source.name, o);
    });
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      throw new RuleViolationError(
        'query_budget_exceeded',
        `The tile ${tile.z}/${tile.x}/${tile.y} of '${source.name}' did not finish within its ${o.budgetMs} ms budget and was stopped.`,
      );
    }
    if (isDatabaseError(error)) {
      throw new RuleViolationError(
        'source_unreadable',
        `The tile ${tile.z}/${tile.x}/${tile.y} of '${source.name}' could not be read: ${error.message}.`,
      );
    }
    throw error;
  }
}

/** The statement text and its parameters; `$1` is the prefix length the encoder keeps. */
interface TileSql {
  /** Selects `ord, fid, props, geom` of the kept features (at most maxFeatures + 1), in id order. */
  kept: string;
  values: unknown[];
}

/**
 * The SQL both paths share up to the tile geometry: the index-friendly bbox filter in the
 * source SRID, a pre-clip (EPSG:4326 and 3857 sources) so a continent-sized polygon isn't
 * transformed whole, the transform to EPSG:3857, the simplification by zoom, the properties as one
 * jsonb object (normalised, so both encoders see the same values) and the feature id.
 */
function tileSql(source: TileLayerSource, tile: Tile, o: Resolved, encoder: TileEncoder): TileSql {
  const b = tileBounds(tile);
  const unit = (b.xmax - b.xmin) / o.extent;
  const values: unknown[] = [];
  const param = (value: unknown, type: string) => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const from =
    source.kind === 'table'
      ? `${escapeIdentifier(source.schema)}.${escapeIdentifier(source.table)} AS q`
      : subquery(source.sql);
  const g = `q.${escapeIdentifier(source.geometryColumn)}`;
  const id = `q.${escapeIdentifier(source.idColumn)}`;
  // The source box: the buffered tile plus a margin, so the tile-space clip below makes the edge.
  const margin = (o.buffer + 8) * unit;
  const box3857 = {
    xmin: b.xmin - margin,
    ymin: b.ymin - margin,
    xmax: b.xmax + margin,
    ymax: b.ymax + margin,
  };
  const srid = param(source.srid, 'int');
  let filter: string;
  let prepared: string;
  if (source.srid === 4326) {
    // Spherical Mercator → degrees in closed form: unlike ST_Transform it never wraps a
    // longitude beyond ±180° (the buffered world tile reaches past the antimeridian).
    const lon = (x: number) => (x / EARTH_RADIUS) * (180 / Math.PI);
    const lat = (y: number) => (2 * Math.atan(Math.exp(y / EARTH_RADIUS)) - Math.PI / 2) * (180 / Math.PI);
    const box = `ST_MakeEnvelope(${param(lon(box3857.xmin), 'float8')}, ${param(lat(box3857.ymin), 'float8')}, ${param(lon(box3857.xmax), 'float8')}, ${param(lat(box3857.ymax), 'float8')}, 4326)`;
    filter = `${g} && ${box}`;
    prepared = `ST_Transform(ST_ClipByBox2D(ST_SetSRID(${g}, ${srid}), ${box}), 3857)`;
  } else if (source.srid === 3857) {
    const box = `ST_MakeEnvelope(${param(box3857.xmin, 'float8')}, ${param(box3857.ymin, 'float8')}, ${param(box3857.xmax, 'float8')}, ${param(box3857.ymax, 'float8')}, 3857)`;
    filter = `${g} && ${box}`;
    prepared = `ST_ClipByBox2D(ST_SetSRID(${g}, 3857), ${box})`;
  } else {
    // Another CRS: filter by the tile's box transformed there (densified edges), clip in 3857.
    const world = (v: number) => Math.max(-HALF_WORLD, Math.min(HALF_WORLD, v));
    const env = `ST_MakeEnvelope(${param(world(box3857.xmin), 'float8')}, ${param(world(box3857.ymin), 'float8')}, ${param(world(box3857.xmax), 'float8')}, ${param(world(box3857.ymax), 'float8')}, 3857)`;
    filter = `${g} && ST_Transform(ST_Segmentize(${env}, ${param((box3857.xmax - box3857.xmin) / 16, 'float8')}), ${srid})`;
    prepared = `ST_Transform(ST_SetSRID(${g}, ${srid}), 3857)`;
  }
  const tolerance = o.simplify > 0 ? param(o.simplify * unit, 'float8') : '';
  const names = source.properties.map((p) => `q.${escapeIdentifier(p)}`);
  const props = names.length
    ? `(SELECT coalesce(jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) IN ('object', 'array')
                 THEN to_jsonb(e.value #>> '{}') ELSE e.value END), '{}'::jsonb)
        FROM jsonb_each(to_jsonb(p)) e WHERE jsonb_typeof(e.value) <> 'null')`
    : `'{}'::jsonb`;
  const propsFrom = names.length ? `CROSS JOIN LATERAL (SELECT ${names.join(', ')}) p` : '';
  // ST_AsMVT wants an integer feature id; vt-pbf a safe one: anything else is no id.
  const fid = `(SELECT CASE WHEN jsonb_typeof(v) = 'number' AND v::numeric >= 0
                  AND v::numeric = trunc(v::numeric) AND v::numeric <= 9007199254740991
                THEN v::numeric::bigint END FROM (SELECT to_jsonb(${id}) AS v) i)`;
  const bounds = [b.xmin, b.ymin, b.xmax, b.ymax].map((v) => param(v, 'float8'));
  const extent = param(o.extent, 'int');
  const buffer = param(o.buffer, 'int');
  const geom =
    encoder === 'postgis'
      ? `ST_AsMVTGeom(s.g, ST_MakeBox2D(ST_Point(${bounds[0]}, ${bounds[1]}), ST_Point(${bounds[2]}, ${bounds[3]})), ${extent}, ${buffer}, true)`
      : tileGeometrySql('s.g', bounds, extent, buffer);
  const limit = param(o.maxFeatures + 1, 'int');
  const kept = `
WITH src AS (
  SELECT ${id} AS ord, ${fid} AS fid, ${props} AS props,
         ${o.simplify > 0 ? `ST_Simplify(${prepared}, ${tolerance}, true)` : prepared} AS g
  FROM ${from} ${propsFrom}
  WHERE ${filter}
), tiled AS (
  SELECT s.ord, s.fid, s.props, ${geom} AS geom FROM src s WHERE NOT ST_IsEmpty(s.g)
)
SELECT ord, fid, props, geom FROM tiled
WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)
ORDER BY ord LIMIT ${limit}`;
  return { kept, values };
}

/**
 * ST_AsMVTGeom's steps in SQL, for a PostGIS without protobuf-c (ADR 0119): drop lines and
 * polygons smaller than half a grid unit; keep the highest-dimension parts of a collection; to
 * tile space (the same affine numbers); snap to the integer grid; drop collinear points; clip to
 * the buffered tile; snap again; polygons made valid (GEOS where ST_AsMVTGeom uses wagyu) with
 * exterior rings counter-clockwise in tile coordinates (positive area, MVT 2.1 §4.3.4.4).
 */
function tileGeometrySql(g: string, bounds: string[], extent: string, buffer: string): string {
  const [xmin, ymin, xmax, ymax] = bounds as [string, string, string, string];
  const fx = `(${extent}::float8 / (${xmax} - ${xmin}))`;
  const fy = `(-(${extent}::float8 / (${ymax} - ${ymin})))`;
  const half = (lo: string, hi: string) => `((${hi} - ${lo}) / ${extent}::float8 / 2.0)`;
  const small = `(GeometryType(${g}) IN ('LINESTRING', 'MULTILINESTRING', 'POLYGON', 'MULTIPOLYGON')
      AND ST_XMax(${g}) - ST_XMin(${g}) < ${half(xmin, xmax)} AND ST_YMax(${g}) - ST_YMin(${g}) < ${half(ymin, ymax)})`;
  const basic = `(CASE WHEN GeometryType(${g}) = 'GEOMETRYCOLLECTION'
      THEN ST_CollectionExtract(${g}, ST_Dimension(${g}) + 1) ELSE ${g} END)`;
  const tiled = `ST_Simplify(ST_SnapToGrid(ST_Affine(${basic}, ${fx}, 0, 0, ${fy}, -${xmin} * ${fx}, -${ymax} * ${fy}), 1), 0)`;
  const box = `ST_MakeEnvelope(-${buffer}, -${buffer}, ${extent} + ${buffer}, ${extent} + ${buffer})`;
  return `(SELECT CASE
      WHEN t.g IS NULL OR ST_IsEmpty(t.g) THEN NULL
      WHEN ST_Dimension(t.g) = 2 THEN ST_ForcePolygonCCW(ST_SnapToGrid(ST_CollectionExtract(
        ST_MakeValid(ST_SnapToGrid(ST_ClipByBox2D(t.g, ${box}), 1)), 3), 1))
      ELSE ST_CollectionExtract(ST_SnapToGrid(ST_ClipByBox2D(t.g, ${box}), 1), ST_Dimension(t.g) + 1)
    END
    FROM (SELECT CASE WHEN ${small} THEN NULL
      WHEN GeometryType(${g}) = 'MULTIPOINT' THEN ST_RemoveRepeatedPoints(${tiled})
      ELSE ${tiled} END AS g) t)`;
}

/** The budget's next prefix length when `bytes` is over `maxBytes` (strictly fewer features). */
function shrink(count: number, bytes: number, maxBytes: number): number {
  return Math.min(count - 1, Math.floor((count * maxBytes) / bytes));
}

async function encodeInPostgis(
  query: ReadOnlyQuery,
  sql: TileSql,
  name: string,
  o: Resolved,
): Promise<RenderedTile> {
  const name$ = sql.values.length + 1;
  const extent$ = name$ + 1;
  const keep$ = name$ + 2;
  const text = `WITH kept AS MATERIALIZED (${sql.kept})
SELECT (SELECT count(*)::int FROM kept) AS n,
       (SELECT ST_AsMVT(f, $${name$}::text, $${extent$}::int, 'geom', 'fid')
        FROM (SELECT k.fid, k.geom, k.props FROM kept k ORDER BY k.ord LIMIT $${keep$}::int) f) AS tile`;
  let keep: number | undefined;
  for (;;) {
    const { rows } = await query<{ n: number; tile: Buffer | null }>(text, [
      ...sql.values,
      name,
      o.extent,
      keep ?? o.maxFeatures,
    ]);
    const n = rows[0]?.n ?? 0;
    const bytes = rows[0]?.tile ?? Buffer.alloc(0);
    const count = Math.min(n, keep ?? o.maxFeatures);
    const truncated = n > count;
    if (bytes.length <= o.maxBytes || count === 0) {
      return { bytes: new Uint8Array(bytes), features: count, truncated, encoder: 'postgis' };
    }
    keep = shrink(count, bytes.length, o.maxBytes);
  }
}

type Geometry =
  | { type: 'Point'; coordinates: number[] }
  | { type: 'MultiPoint' | 'LineString'; coordinates: number[][] }
  | { type: 'MultiLineString' | 'Polygon'; coordinates: number[][][] }
  | { type: 'MultiPolygon'; coordinates: number[][][][] };

type Rings = ReturnType<VectorTileFeatureLike['loadGeometry']>;

interface Feature {
  id: number | undefined;
  type: 1 | 2 | 3;
  properties: Record<string, string | number | boolean>;
  rings: Rings;
}

function feature(row: { fid: string | null; props: Record<string, unknown>; geojson: string }): Feature {
  const geometry = JSON.parse(row.geojson) as Geometry;
  const ring = (points: number[][]) => points.map(([x, y]) => ({ x, y })) as Rings[number];
  let type: Feature['type'];
  let rings: Rings;
  switch (geometry.type) {
    case 'Point':
      type = 1;
      rings = [ring([geometry.coordinates])];
      break;
    case 'MultiPoint':
      type = 1;
      rings = [ring(geometry.coordinates)];
      break;
    case 'LineString':
      type = 2;
      rings = [ring(geometry.coordinates)];
      break;
    case 'MultiLineString':
      type = 2;
      rings = geometry.coordinates.map(ring);
      break;
    case 'Polygon':
      type = 3;
      rings = geometry.coordinates.map(ring);
      break;
    case 'MultiPolygon':
      type = 3;
      rings = geometry.coordinates.flatMap((polygon) => polygon.map(ring));
      break;
  }
  const properties: Feature['properties'] = {};
  for (const [key, value] of Object.entries(row.props)) {
    if (typeof value === 'string' || typeof value === 'boolean') properties[key] = value;
    else if (typeof value === 'number') properties[key] = mvtNumber(value);
  }
  return { id: row.fid === null ? undefined : Number(row.fid), type, properties, rings };
}

/** A number as ST_AsMVT encodes a jsonb number: the integer when within FLT_EPSILON of it, else the double. */
function mvtNumber(value: number): number {
  if (Math.abs(value) >= INT64_LIMIT) return value;
  const integer = Math.trunc(value);
  return Math.abs(value - integer) > FLT_EPSILON ? value : integer;
}

function encode(name: string, extent: number, features: Feature[]): Uint8Array {
  if (features.length === 0) return new Uint8Array(0);
  const layer: VectorTileLayerLike = {
    version: 2,
    name,
    extent,
    length: features.length,
    feature: (i: number) => {
      const f = features[i] as Feature;
      return { id: f.id, type: f.type, properties: f.properties, extent, loadGeometry: () => f.rings };
    },
  };
  return fromVectorTileJs({ layers: { [name]: layer } });
}

async function encodeHere(
  query: ReadOnlyQuery,
  sql: TileSql,
  name: string,
  o: Resolved,
): Promise<RenderedTile> {
  const { rows } = await query<{ fid: string | null; props: Record<string, unknown>; geojson: string }>(
    `SELECT k.fid::text AS fid, k.props, ST_AsGeoJSON(k.geom) AS geojson FROM (${sql.kept}) k ORDER BY k.ord`,
    sql.values,
  );
  const all = rows.map(feature);
  let count = Math.min(all.length, o.maxFeatures);
  for (;;) {
    const bytes = encode(name, o.extent, all.slice(0, count));
    if (bytes.length <= o.maxBytes || count === 0) {
      return { bytes, features: count, truncated: all.length > count, encoder: 'typescript' };
    }
    count = shrink(count, bytes.length, o.maxBytes);
  }
}
