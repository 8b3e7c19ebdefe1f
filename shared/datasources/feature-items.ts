/**
 * The query core of OGC API Features `/collections/{id}/items` and `/items/{featureId}` over a
 * PostGIS layer (ADR 0121): keyset pages in id order, bbox through the spatial index, output in
 * the requested CRS, GeoJSON out. No HTTP here: the endpoints build links, headers and the
 * exception body around it.
 *
 * Every read runs through the guarded read-only path of postgis-sessions.ts (`readOnly`: READ ONLY
 * transaction, statement budget, client-side deadline); a SQL view passes the SQL gate first, as
 * validate-sql does. Identifiers are quoted with `escapeIdentifier`; values travel as parameters.
 */
import { InvalidInputError, NotFoundError, RuleViolationError } from '#domain/errors.ts';
import {
  CRS84,
  type Crs,
  checkFeatureId,
  collectionCrs,
  encodeFeatureCursor,
  type FeatureQuery,
  type FeatureQueryContext,
  type Queryable,
  type QueryBox,
  timeDimension,
} from '#domain/feature-query.ts';
import type { Layer } from '#domain/layers.ts';
import type { OGCAPISettings } from '#domain/settings.ts';
import { escapeIdentifier, isDatabaseError } from './pg-driver.ts';
import type { PostgisConnection } from './postgis.ts';
import { relationLookupSql } from './postgis-discovery.ts';
import { BudgetExceededError, type ReadOnlyQuery, readOnly } from './postgis-sessions.ts';
import { hiddenCallRefusal, subquery } from './postgis-sql-views.ts';
import { checkSql } from './sql-guard.ts';

/** Where a collection's features come from, with what the query needs to know about them. */
export type FeatureSource = (
  | { kind: 'table'; schema: string; table: string }
  | { kind: 'sql'; sql: string }
) & {
  geometryColumn: string;
  /** The SRID the geometries are stored in (a geometry stored with SRID 0 is read as this). */
  srid: number;
  /** The unique, non-null key pages are ordered and sought by. */
  idColumn: string;
  /** The JSON type of the id's values (`integer` ids are numbers in GeoJSON, others strings). */
  idType: string;
  /** Columns written as properties, in this order; every one is queryable by equality. */
  properties: readonly Queryable[];
  /** The time dimension's columns (start, and end for intervals), when datetime applies. */
  time?: { start: string; end?: string };
  /** The CRSs the collection offers, CRS84 first, axis order resolved. */
  crs: readonly Crs[];
};

/** A source before its time columns and CRSs are known (distributed over the two kinds). */
type SourceShape = FeatureSource extends infer S
  ? S extends unknown
    ? Omit<S, 'time' | 'crs'>
    : never
  : never;

/** A GeoJSON feature as the items answer carries it. */
export interface GeoJsonFeature {
  type: 'Feature';
  id: string | number;
  geometry: Record<string, unknown> | null;
  properties: Record<string, unknown>;
}

/** A link of the items answer. */
export interface ItemsLink {
  href: string;
  rel: string;
  type: string;
  title?: string;
}

/** One page of items: the FeatureCollection and what the endpoint needs besides. */
export interface FeatureItemsPage {
  collection: {
    type: 'FeatureCollection';
    features: GeoJsonFeature[];
    numberReturned: number;
    links: ItemsLink[];
  };
  /** The Content-Crs header value (`<uri>`, Part 2). */
  contentCrs: string;
  /** The cursor of the next page, when there are more features. */
  nextCursor?: string;
}

/** A single feature and its Content-Crs. */
export interface FeatureItem {
  feature: GeoJsonFeature;
  contentCrs: string;
}

/** How the read is made; every field has a default. */
export interface ItemsOptions {
  /** The statement budget of one page; default {@link ITEMS_BUDGET_MS}. */
  budgetMs?: number;
  /** Builds the href of the next page from its cursor; without it the answer has no `next` link. */
  nextHref?: (cursor: string) => string;
}

/** The statement budget of one page (or one feature). */
export const ITEMS_BUDGET_MS = 10_000;
/** The budget of describing a table layer (catalog reads). */
export const DESCRIBE_SOURCE_BUDGET_MS = 5_000;
/** Preferred id column names, best first (matched case-insensitively), as describeSql suggests them. */
const ID_NAMES = ['id', 'fid', 'gid', 'ogc_fid', 'objectid', 'feature_id'];
const DEFAULT_SRID = 4326;
/** Web Mercator's latitude limit: a geographic box is clamped to it before going to EPSG:3857. */
const MERCATOR_MAX_LAT = 85.0511287798066;

interface ColumnRow {
  name: string;
  type: string;
  category: string;
  notnull: boolean;
  srid: number | null;
}

/** The JSON type a PostgreSQL type's values take (the mapping describeSql reports columns with). */
function jsonType(type: string, category: string): string {
  if (category === 'A') return 'array';
  if (['int2', 'int4', 'int8'].includes(type)) return 'integer';
  if (category === 'N') return 'number';
  if (category === 'B') return 'boolean';
  if (type === 'json' || type === 'jsonb') return 'object';
  return 'string';
}

/**
 * Which of `srids` have latitude (northing) first, from the data source's spatial_ref_sys: a
 * geographic CRS (EPSG defines its geographic CRSs latitude first), or a CRS whose own WKT axes
 * name NORTH or SOUTH first. WKT without axes is read east/north (ADR 0121).
 */
async function latFirstSrids(query: ReadOnlyQuery, srids: number[]): Promise<Set<number>> {
  const wanted = srids.filter((s) => s !== 4326 && s !== 3857);
  if (wanted.length === 0) return new Set();
  const { rows } = await query<{ srid: number; srtext: string | null }>(
    'SELECT srid, srtext FROM spatial_ref_sys WHERE srid = ANY($1::int[])',
    [wanted],
  );
  const out = new Set<number>();
  for (const { srid, srtext } of rows) {
    const text = (srtext ?? '').trim();
    const axes = text.match(/AXIS\["[^"]*",\s*(NORTH|SOUTH|EAST|WEST|UP|DOWN|OTHER)\]/gi) ?? [];
    // A projected CRS's own axes come last (its base GEOGCS's, if any, come before).
    const own = axes.length >= 2 ? axes[axes.length - 2] : undefined;
    if (own ? /(NORTH|SOUTH)\]$/i.test(own) : /^GEOGCS\[/i.test(text)) out.add(srid);
  }
  return out;
}

/**
 * What a table (or view) layer is made of, read from the catalog of the data source: the relation
 * (`schema.table`, or a table found in `c.schemas` in order), its first geometry column and SRID
 * (the column's, else the first feature's, else 4326), its id column (a single-column primary key
 * or unique index, else an integer or uuid column named id, fid, gid, ogc_fid, objectid or
 * feature_id) and its other columns as properties. No id column, no relation or no geometry is a
 * RuleViolationError `source_unreadable`.
 */
async function describeTable(
  query: ReadOnlyQuery,
  schemas: string[],
  sourceLayer: string,
): Promise<Omit<Extract<FeatureSource, { kind: 'table' }>, 'time' | 'crs'>> {
  const found = await query<{ oid: number; schema: string; table: string }>(relationLookupSql(), [
    sourceLayer,
    schemas,
  ]);
  const relation = found.rows[0];
  if (!relation) {
    throw new RuleViolationError(
      'source_unreadable',
      `The source layer "${sourceLayer}" does not exist in the schema(s) ${schemas.join(', ')}.`,
    );
  }
  const qualified = `${relation.schema}.${relation.table}`;
  const columns = await query<ColumnRow>(
    `SELECT a.attname AS name, coalesce(b.typname, t.typname) AS type,
            coalesce(b.typcategory, t.typcategory)::text AS category, a.attnotnull AS notnull,
            CASE WHEN t.typname = 'geometry' THEN postgis_typmod_srid(a.atttypmod) END AS srid
     FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_catalog.pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
     WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [relation.oid],
  );
  const geometry = columns.rows.find((c) => c.type === 'geometry');
  if (!geometry) {
    throw new RuleViolationError(
      'source_unreadable',
      `The source layer "${qualified}" has no geometry column.`,
    );
  }
  const relationSql = `${escapeIdentifier(relation.schema)}.${escapeIdentifier(relation.table)}`;
  let srid = geometry.srid ?? 0;
  if (srid === 0) {
    const g = escapeIdentifier(geometry.name);
    const first = await query<{ srid: number }>(
      `SELECT ST_SRID(${g}) AS srid FROM ${relationSql} WHERE ${g} IS NOT NULL LIMIT 1`,
    );
    srid = first.rows[0]?.srid ?? 0;
  }
  const unique = await query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_catalog.pg_index i
     JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
     WHERE i.indrelid = $1 AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
       AND i.indexprs IS NULL AND (i.indisprimary OR a.attnotnull)
     ORDER BY i.indisprimary DESC, a.attnum LIMIT 1`,
    [relation.oid],
  );
  const plain = columns.rows.filter((c) => c.type !== 'geometry');
  const idLike = (c: ColumnRow) => jsonType(c.type, c.category) === 'integer' || c.type === 'uuid';
  const idName =
    unique.rows[0]?.name ??
    ID_NAMES.map((n) => plain.find((c) => c.name.toLowerCase() === n && idLike(c))).find(Boolean)?.name;
  const id = plain.find((c) => c.name === idName);
  if (!id) {
    throw new RuleViolationError(
      'source_unreadable',
      `The source layer "${qualified}" has no id column: it needs a single-column primary key or unique index, or an integer or uuid column named ${ID_NAMES.join(', ')}.`,
    );
  }
  return {
    kind: 'table',
    schema: relation.schema,
    table: relation.table,
    geometryColumn: geometry.name,
    srid: srid || DEFAULT_SRID,
    idColumn: id.name,
    idType: jsonType(id.type, id.category),
    properties: plain.map((c) => ({ name: c.name, type: jsonType(c.type, c.category) })),
  };
}

/** The layer fields describeFeatureSource reads. */
export type FeatureLayer = Pick<
  Layer,
  'public_id' | 'source_layer' | 'is_sql_view' | 'sql_view' | 'dimensions' | 'crs_default'
>;

/**
 * What the items query of a layer reads (ADR 0121): a table layer is described from the data
 * source's catalog (see describeTable), a SQL-view layer from its stored view (id column,
 * geometry column, SRID, properties), both with the time dimension's columns when the layer has
 * one whose `source_property` (and `end_property`) are properties, and the collection's CRSs
 * with their axis order from spatial_ref_sys. One read-only unit of work.
 */
export async function describeFeatureSource(
  c: PostgisConnection,
  layer: FeatureLayer,
  budgetMs = DESCRIBE_SOURCE_BUDGET_MS,
): Promise<FeatureSource> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  return guarded(layer.public_id, budgetMs, 'describe', () =>
    readOnly(c, budgetMs, async (query) => {
      let base: SourceShape;
      const view = layer.sql_view;
      if (layer.is_sql_view && view) {
        const properties = view.properties ?? [];
        const id = properties.find((p) => p.name === view.id_column);
        if (!view.id_column || !id) {
          throw new RuleViolationError(
            'source_unreadable',
            `The SQL view of '${layer.public_id}' has no id column among its properties.`,
          );
        }
        base = {
          kind: 'sql',
          sql: view.sql,
          geometryColumn: view.geometry_column,
          srid: view.srid ?? DEFAULT_SRID,
          idColumn: id.name,
          idType: id.type,
          properties,
        };
      } else {
        base = await describeTable(query, schemas, layer.source_layer);
      }
      const dimension = timeDimension(layer.dimensions);
      const has = (name: string | undefined) => base.properties.some((p) => p.name === name);
      const time =
        dimension?.source_property && has(dimension.source_property)
          ? {
              start: dimension.source_property,
              ...(dimension.end_property && has(dimension.end_property)
                ? { end: dimension.end_property }
                : {}),
            }
          : undefined;
      const others = layer.crs_default && layer.crs_default !== base.srid ? [layer.crs_default] : [];
      const latFirst = await latFirstSrids(query, [base.srid, ...others]);
      return {
        ...base,
        ...(time ? { time } : {}),
        crs: collectionCrs(base.srid, others, latFirst),
      };
    }),
  );
}

/** The parser's context for a described source (ADR 0121): its CRSs, queryables and time. */
export function featureQueryContext(
  source: FeatureSource,
  settings?: Pick<OGCAPISettings, 'limit_default' | 'limit_max'>,
  passThrough: readonly string[] = ['f'],
): FeatureQueryContext {
  return {
    ...(settings ? { settings } : {}),
    crs: source.crs,
    queryables: source.properties,
    temporal: Boolean(source.time),
    passThrough,
  };
}

/** A statement and its parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

class Params {
  readonly values: unknown[] = [];
  add(value: unknown, type?: string): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }
}

function fromClause(source: FeatureSource): string {
  return source.kind === 'table'
    ? `${escapeIdentifier(source.schema)}.${escapeIdentifier(source.table)} AS q`
    : subquery(source.sql);
}

/** The SELECT list every read shares: id as text, properties as one jsonb, geometry as GeoJSON in `crs`. */
function selectList(source: FeatureSource, crs: Crs, p: Params): string {
  const g = `q.${escapeIdentifier(source.geometryColumn)}`;
  let out = `ST_SetSRID(${g}, ${p.add(source.srid, 'int')})`;
  if (crs.srid !== source.srid) out = `ST_Transform(${out}, ${p.add(crs.srid, 'int')})`;
  // Part 2: coordinates in the CRS's axis order; PostGIS keeps x = east, so lat-first CRSs flip.
  if (crs.latFirst) out = `ST_FlipCoordinates(${out})`;
  const names = source.properties.map((c) => `q.${escapeIdentifier(c.name)}`);
  const props = names.length ? `(SELECT to_jsonb(p) FROM (SELECT ${names.join(', ')}) p)` : `'{}'::jsonb`;
  return `q.${escapeIdentifier(source.idColumn)}::text AS fid, ${props} AS props, ST_AsGeoJSON(${out}) AS geojson`;
}

/** The envelope(s) of a bbox in the source's SRID, as SQL (two when it spans the antimeridian). */
function boxes(box: QueryBox, source: FeatureSource, p: Params): string[] {
  const parts: [number, number][] = box.crossesAntimeridian
    ? [
        [box.minx, 180],
        [-180, box.maxx],
      ]
    : [[box.minx, box.maxx]];
  const toMercator = box.crs.srid === 4326 && source.srid === 3857;
  const clampLat = (y: number) =>
    toMercator ? Math.max(-MERCATOR_MAX_LAT, Math.min(MERCATOR_MAX_LAT, y)) : y;
  const miny = clampLat(box.miny);
  const maxy = clampLat(box.maxy);
  return parts.map(([minx, maxx]) => {
    const env = `ST_MakeEnvelope(${p.add(minx, 'float8')}, ${p.add(miny, 'float8')}, ${p.add(maxx, 'float8')}, ${p.add(maxy, 'float8')}, ${p.add(box.crs.srid, 'int')})`;
    if (box.crs.srid === source.srid) return env;
    // Edges densified before the transform, so a curved edge in the source CRS is followed.
    const step = Math.max(maxx - minx, maxy - miny) / 16;
    const dense = step > 0 ? `ST_Segmentize(${env}, ${p.add(step, 'float8')})` : env;
    return `ST_Transform(${dense}, ${p.add(source.srid, 'int')})`;
  });
}

/** The WHERE conditions of the filters (bbox, datetime, properties), without the keyset. */
function filterConditions(source: FeatureSource, query: FeatureQuery, p: Params): string[] {
  const where: string[] = [];
  const g = `q.${escapeIdentifier(source.geometryColumn)}`;
  if (query.bbox) {
    // `&&` is the index-friendly box test; ST_Intersects then keeps only the real intersections.
    const tests = boxes(query.bbox, source, p).map(
      (env) => `(${g} && ${env} AND ST_Intersects(${g}, ${env}))`,
    );
    where.push(tests.length === 1 ? (tests[0] as string) : `(${tests.join(' OR ')})`);
  }
  if (query.datetime && source.time) {
    const start = `q.${escapeIdentifier(source.time.start)}`;
    const end = source.time.end ? `q.${escapeIdentifier(source.time.end)}` : start;
    const t = query.datetime;
    // The feature's [start, end] (an absent end: still going) intersects the asked interval.
    if (t.end !== undefined)
      where.push(`${start} ${t.endExclusive ? '<' : '<='} ${p.add(t.end, 'timestamptz')}`);
    else where.push(`${start} IS NOT NULL`);
    if (t.start !== undefined) {
      const s = p.add(t.start, 'timestamptz');
      where.push(source.time.end ? `(${end} IS NULL OR ${end} >= ${s})` : `${end} >= ${s}`);
    }
  }
  for (const f of query.filters) {
    // The parameter's type is the column's (PostgreSQL infers it): an index on it can be used.
    where.push(`q.${escapeIdentifier(f.name)} = ${p.add(f.value)}`);
  }
  return where;
}

/**
 * The statement of one page (ADR 0121): the filters, `id > $after` when it continues a page, in
 * id order, `limit + 1` rows (the extra one says whether there is a next page). Never OFFSET: a
 * page far down costs what the first one does.
 */
export function itemsStatement(source: FeatureSource, query: FeatureQuery): Statement {
  const p = new Params();
  const id = `q.${escapeIdentifier(source.idColumn)}`;
  const select = selectList(source, query.crs, p);
  const where = [`${id} IS NOT NULL`, ...filterConditions(source, query, p)];
  if (query.after !== undefined) where.push(`${id} > ${p.add(query.after)}`);
  const limit = p.add(query.limit + 1, 'int');
  return {
    text: `SELECT ${select} FROM ${fromClause(source)} WHERE ${where.join(' AND ')} ORDER BY ${id} LIMIT ${limit}`,
    values: p.values,
  };
}

/** The statement of a single feature by id. */
export function itemStatement(source: FeatureSource, featureId: string, crs: Crs): Statement {
  const p = new Params();
  const select = selectList(source, crs, p);
  return {
    text: `SELECT ${select} FROM ${fromClause(source)} WHERE q.${escapeIdentifier(source.idColumn)} = ${p.add(featureId)} LIMIT 1`,
    values: p.values,
  };
}

interface Row {
  fid: string;
  props: Record<string, unknown> | null;
  geojson: string | null;
}

function featureOf(source: FeatureSource, row: Row): GeoJsonFeature {
  const n = Number(row.fid);
  return {
    type: 'Feature',
    id: source.idType === 'integer' && Number.isSafeInteger(n) ? n : row.fid,
    geometry: row.geojson === null ? null : (JSON.parse(row.geojson) as Record<string, unknown>),
    properties: row.props ?? {},
  };
}

/** A SQL view is checked by the SQL gate before it runs, and its hidden calls in the database. */
async function gate(c: PostgisConnection, source: FeatureSource, name: string) {
  if (source.kind !== 'sql') return undefined;
  const guard = await checkSql(source.sql, c.schemas);
  if (!guard.ok)
    throw new RuleViolationError('source_unreadable', `The SQL view of '${name}' is refused: ${guard.error}`);
  return async (query: ReadOnlyQuery) => {
    const hidden = await hiddenCallRefusal(query, guard);
    if (hidden)
      throw new RuleViolationError('source_unreadable', `The SQL view of '${name}' is refused: ${hidden}`);
  };
}

/**
 * Maps what a read can fail with: an overrun to `query_budget_exceeded`, a value the column's
 * type refuses (SQLSTATE class 22) to `onBadValue`, other database errors to `source_unreadable`.
 */
async function guarded<T>(
  name: string,
  budgetMs: number,
  what: string,
  work: () => Promise<T>,
  onBadValue?: (error: Error) => Error,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      throw new RuleViolationError(
        'query_budget_exceeded',
        `The ${what} of '${name}' did not finish within its ${budgetMs} ms budget and was stopped.`,
      );
    }
    if (isDatabaseError(error)) {
      if (onBadValue && error.code?.startsWith('22')) throw onBadValue(error);
      throw new RuleViolationError('source_unreadable', `The ${what} of '${name}' failed: ${error.message}.`);
    }
    throw error;
  }
}

/**
 * Reads one page of a collection's items (ADR 0121) for a query from parseFeatureQuery: at most
 * `limit` features after the cursor's id, in id order, geometries in the query's CRS, with a
 * `next` cursor (and link, given `nextHref`) when more features match. `numberMatched` is left
 * out: an exact count costs a scan of every match. A filter value the column's type refuses is an
 * InvalidInputError; an overrun RuleViolationError `query_budget_exceeded`; an unreadable source
 * `source_unreadable`; a source that is down UnavailableError.
 */
export async function readFeatureItems(
  c: PostgisConnection,
  source: FeatureSource,
  query: FeatureQuery,
  name: string,
  options: ItemsOptions = {},
): Promise<FeatureItemsPage> {
  const budgetMs = options.budgetMs ?? ITEMS_BUDGET_MS;
  const hidden = await gate(c, source, name);
  const statement = itemsStatement(source, query);
  const rows = await guarded(
    name,
    budgetMs,
    'items query',
    () =>
      readOnly(c, budgetMs, async (q) => {
        await hidden?.(q);
        return (await q<Row>(statement.text, statement.values)).rows;
      }),
    (error) =>
      new InvalidInputError(
        'invalid_parameter',
        `A filter value or the cursor does not fit the collection's data: ${error.message}.`,
      ),
  );
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const last = page[page.length - 1];
  const nextCursor = more && last ? encodeFeatureCursor(last.fid) : undefined;
  const links: ItemsLink[] =
    nextCursor && options.nextHref
      ? [
          {
            href: options.nextHref(nextCursor),
            rel: 'next',
            type: 'application/geo+json',
            title: 'Next page',
          },
        ]
      : [];
  return {
    collection: {
      type: 'FeatureCollection',
      features: page.map((row) => featureOf(source, row)),
      numberReturned: page.length,
      links,
    },
    contentCrs: `<${query.crs.uri}>`,
    ...(nextCursor ? { nextCursor } : {}),
  };
}

/**
 * Reads one feature by id in `crs` (default CRS84). An id that is absent, or that can't be a value
 * of the id column's type (a word for an integer id, a NUL), is a NotFoundError `feature_not_found`.
 */
export async function readFeatureItem(
  c: PostgisConnection,
  source: FeatureSource,
  featureId: string,
  name: string,
  crs: Crs = source.crs.find((x) => x.uri === CRS84) as Crs,
  options: Pick<ItemsOptions, 'budgetMs'> = {},
): Promise<FeatureItem> {
  const budgetMs = options.budgetMs ?? ITEMS_BUDGET_MS;
  const notFound = () =>
    new NotFoundError(
      'feature_not_found',
      `The feature '${featureId.slice(0, 128)}' does not exist in '${name}'.`,
    );
  const id = checkFeatureId(featureId);
  if (id === undefined) throw notFound();
  const hidden = await gate(c, source, name);
  const statement = itemStatement(source, id, crs);
  const rows = await guarded(
    name,
    budgetMs,
    'feature read',
    () =>
      readOnly(c, budgetMs, async (q) => {
        await hidden?.(q);
        return (await q<Row>(statement.text, statement.values)).rows;
      }),
    notFound,
  );
  const row = rows[0];
  if (!row) throw notFound();
  return { feature: featureOf(source, row), contentCrs: `<${crs.uri}>` };
}
