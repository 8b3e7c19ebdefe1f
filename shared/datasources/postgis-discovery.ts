/**
 * Layer discovery and probing over the read-only units of work (ADR 0032): the readable geometry
 * relations of a service's schemas with their geometry type, SRID and extent, the check of one
 * layer's source table, and the lookup of the relation a `source_layer` names.
 */
import type { DiscoveredLayer } from '#domain/datasource.ts';
import { RuleViolationError, UnavailableError } from '#domain/errors.ts';
import { escapeIdentifier, isDatabaseError } from './pg-driver.ts';
import type { PostgisConnection } from './postgis.ts';
import { attempt, BudgetExceededError, type ReadOnlyQuery, readOnly } from './postgis-sessions.ts';

export type { DiscoveredLayer };

/** Catalog reads and extents of discoverLayers, as a whole. */
export const DISCOVERY_BUDGET_MS = 10_000;
/** Default budget of probeLayer. */
export const PROBE_BUDGET_MS = 5_000;
/** Tables up to this size get an exact ST_Extent when no statistics exist. */
const EXACT_EXTENT_MAX_BYTES = 8 * 1024 * 1024;
export const DEFAULT_SRID = 4326;

interface GeometryColumnRow {
  oid: number;
  schema: string;
  table: string;
  kind: string;
  column: string;
  type: string;
  srid: number;
  bytes: string;
}

/** Geometry columns of readable relations in the service's schemas, first per relation. */
const GEOMETRY_COLUMNS = `
SELECT DISTINCT ON (n.nspname, c.relname)
       c.oid::int AS oid, n.nspname AS schema, c.relname AS "table", c.relkind::text AS kind,
       a.attname AS "column", upper(postgis_typmod_type(a.atttypmod)) AS type,
       postgis_typmod_srid(a.atttypmod) AS srid,
       CASE WHEN c.relkind IN ('r', 'm') THEN pg_catalog.pg_relation_size(c.oid) END AS bytes
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE t.typname = 'geometry'
  AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND NOT c.relispartition`;

/**
 * The relation a layer's `source_layer` names (`schema.table`, or a bare name found along the
 * service's schemas in order; $1 the name, $2 the schemas): its oid, schema and name, then `extra`.
 */
export function relationLookupSql(extra = ''): string {
  return `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS "table"${extra}
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname = ANY($2::text[])
       AND (n.nspname || '.' || c.relname = $1 OR c.relname = $1)
     ORDER BY n.nspname || '.' || c.relname = $1 DESC, array_position($2::text[], n.nspname::text)
     LIMIT 1`;
}

/**
 * Of `sourceLayers`, the ones no relation of the service's schemas answers to (the catalog
 * integrity check, ADR 0138): one read-only session, one catalog lookup per name. Outages throw
 * UnavailableError; a refused login RuleViolationError, as every read here.
 */
export async function missingRelations(
  c: PostgisConnection,
  sourceLayers: readonly string[],
  budgetMs = PROBE_BUDGET_MS,
): Promise<string[]> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  return readOnly(c, budgetMs, async (query) => {
    const missing: string[] = [];
    for (const name of new Set(sourceLayers)) {
      const found = await query(relationLookupSql(), [name, schemas]);
      if (found.rows.length === 0) missing.push(name);
    }
    return missing;
  });
}

const READABLE = `pg_catalog.has_schema_privilege(n.oid, 'USAGE') AND pg_catalog.has_table_privilege(c.oid, 'SELECT')`;

/**
 * Readable geometry tables, views, materialized views and partitioned tables of `c.schemas`
 * (default `['public']`), one layer per relation (its first geometry column). Extents come from
 * ST_EstimatedExtent (planner statistics), else ST_Extent for tables up to 8 MB, else null.
 */
export async function discoverLayers(c: PostgisConnection): Promise<DiscoveredLayer[]> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  try {
    return await readOnly(c, DISCOVERY_BUDGET_MS, async (query, session) => {
      if (!session.postgis) throw noPostgis(c);
      const { rows } = await query<GeometryColumnRow>(
        `${GEOMETRY_COLUMNS} AND n.nspname = ANY($1::text[]) AND ${READABLE} ORDER BY n.nspname, c.relname, a.attnum`,
        [schemas],
      );
      rows.sort((a, b) => schemas.indexOf(a.schema) - schemas.indexOf(b.schema));
      const layers: DiscoveredLayer[] = [];
      for (const row of rows) layers.push(await describeLayer(query, row));
      return layers;
    });
  } catch (error) {
    // A source that can't list its tables in time is as good as down; one that fails to is not.
    if (error instanceof BudgetExceededError) {
      throw new UnavailableError(
        'datasource_unavailable',
        `The data source ${c.host}:${c.port}/${c.database} did not list its layers within ${DISCOVERY_BUDGET_MS} ms.`,
      );
    }
    if (isDatabaseError(error)) {
      throw new RuleViolationError('source_unreadable', `Discovery failed: ${error.message}.`);
    }
    throw error;
  }
}

export function noPostgis(c: PostgisConnection): RuleViolationError {
  return new RuleViolationError(
    'source_unreadable',
    `PostGIS is not installed in the database ${c.host}:${c.port}/${c.database}.`,
  );
}

/** Normalises a typmod type name to GeometryType()'s spelling: `PointZ` → `POINT`, `PointM` → `POINTM`. */
export function geometryTypeName(typmodType: string): string {
  return typmodType.toUpperCase().replace(/ZM?$/, '');
}

async function describeLayer(query: ReadOnlyQuery, row: GeometryColumnRow): Promise<DiscoveredLayer> {
  const relation = `${escapeIdentifier(row.schema)}.${escapeIdentifier(row.table)}`;
  const column = escapeIdentifier(row.column);
  let srid = row.srid;
  if (srid === 0) {
    // An unconstrained column: the first feature tells the SRID.
    const first = await attempt<{ srid: number }>(
      query,
      `SELECT ST_SRID(${column}) AS srid FROM ${relation} WHERE ${column} IS NOT NULL LIMIT 1`,
    );
    srid = first.rows?.[0]?.srid ?? 0;
  }
  return {
    schema: row.schema,
    table: row.table,
    name: row.schema === 'public' ? row.table : `${row.schema}.${row.table}`,
    geometry_column: row.column,
    geometry_type: geometryTypeName(row.type),
    srid: srid || DEFAULT_SRID,
    extent: await extentOf(query, row, relation, column),
  };
}

type Extent = NonNullable<DiscoveredLayer['extent']>;

async function extentOf(
  query: ReadOnlyQuery,
  row: GeometryColumnRow,
  relation: string,
  column: string,
): Promise<Extent | null> {
  const corners = `ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y`;
  if (row.kind === 'r' || row.kind === 'm' || row.kind === 'p') {
    const estimated = await attempt<Extent>(
      query,
      `SELECT ${corners} FROM (SELECT ST_EstimatedExtent($1, $2, $3) AS e) s WHERE e IS NOT NULL`,
      [row.schema, row.table, row.column],
    );
    if (estimated.rows?.[0]) return estimated.rows[0];
  }
  if (row.bytes !== null && Number(row.bytes) <= EXACT_EXTENT_MAX_BYTES) {
    const exact = await attempt<Extent>(
      query,
      `SELECT ${corners} FROM (SELECT ST_Extent(${column}) AS e FROM ${relation}) s WHERE e IS NOT NULL`,
    );
    if (exact.rows?.[0]) return exact.rows[0];
  }
  return null;
}

/**
 * Checks that `sourceLayer` (`schema.table`, or a table found in `c.schemas` in order) exists in
 * the service's schemas, has a geometry column and that one feature reads within `budgetMs`
 * (an empty table reads fine). Problems with the layer are `ok: false` with the reason; outages
 * throw UnavailableError, refused logins RuleViolationError('source_unreadable').
 */
export async function probeLayer(
  c: PostgisConnection,
  sourceLayer: string,
  budgetMs = PROBE_BUDGET_MS,
): Promise<{ ok: true; layer: DiscoveredLayer } | { ok: false; reason: string }> {
  const schemas = c.schemas?.length ? c.schemas : ['public'];
  try {
    return await readOnly(c, budgetMs, async (query, session) => {
      if (!session.postgis) return { ok: false, reason: noPostgis(c).message };
      const found = await query<{ oid: number; schema: string; table: string; readable: boolean }>(
        relationLookupSql(`, ${READABLE} AS readable`),
        [sourceLayer, schemas],
      );
      const relation = found.rows[0];
      if (!relation) {
        return {
          ok: false,
          reason: `The source layer "${sourceLayer}" does not exist in the schema(s) ${schemas.join(', ')}.`,
        };
      }
      const qualified = `${relation.schema}.${relation.table}`;
      const { rows } = await query<GeometryColumnRow>(
        `${GEOMETRY_COLUMNS} AND c.oid = $1 ORDER BY n.nspname, c.relname, a.attnum`,
        [relation.oid],
      );
      const row = rows[0];
      if (!row) return { ok: false, reason: `The source layer "${qualified}" has no geometry column.` };
      if (!relation.readable) {
        return {
          ok: false,
          reason: `Permission denied: the role "${session.user}" can't read "${qualified}".`,
        };
      }
      const read = await attempt(
        query,
        `SELECT * FROM ${escapeIdentifier(relation.schema)}.${escapeIdentifier(relation.table)} LIMIT 1`,
      );
      if (read.error) {
        return { ok: false, reason: `A feature of "${qualified}" could not be read: ${read.error.message}.` };
      }
      return { ok: true, layer: await describeLayer(query, row) };
    });
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      return { ok: false, reason: `No feature of "${sourceLayer}" could be read within ${budgetMs} ms.` };
    }
    if (isDatabaseError(error)) {
      return {
        ok: false,
        reason: `The source layer "${sourceLayer}" could not be inspected: ${error.message}.`,
      };
    }
    throw error;
  }
}
