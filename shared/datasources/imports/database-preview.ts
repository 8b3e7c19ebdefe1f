/** Previews of an import's rows (staged or published) as GeoJSON, from the import database. */
import { escapeIdentifier as ident } from '../pg-driver.ts';
import { locate } from './database-checkpoints.ts';
import { type ImportConnection, STATEMENT_TIMEOUT_MS } from './database-connection.ts';
import { importSchemas } from './database-names.ts';

/**
 * A GeoJSON FeatureCollection of up to `limit` (1–1000) rows of the table, staged or published,
 * in fid order: id = fid, geometry in EPSG:4326 (transformed when its SRID is known and
 * another), properties = the other columns. Unknown table → undefined.
 */
export function preview(
  s: ImportConnection,
  importId: string,
  table: string,
  limit: number,
): Promise<{ type: 'FeatureCollection'; features: unknown[] } | undefined> {
  const schemas = importSchemas(importId);
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    const where = await locate(s, importId, table);
    if (!where) return undefined;
    const relation = `${ident(schemas[where])}.${ident(table)}`;
    const columns = await s.query<{ name: string; type: string }>(
      `SELECT a.attname AS name, t.typname AS type FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
       WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [relation],
    );
    const geometry = columns.rows.find((c) => c.type === 'geometry')?.name;
    const g = geometry ? ident(geometry) : undefined;
    const shape = g
      ? `ST_AsGeoJSON(CASE WHEN ST_SRID(${g}) NOT IN (0, 4326) THEN ST_Transform(${g}, 4326) ELSE ${g} END)::json`
      : 'NULL::json';
    const { rows } = await s.query<{ row: Record<string, unknown>; geometry: unknown }>(
      `SELECT to_json(r) AS row, ${shape} AS geometry FROM ${relation} r ORDER BY fid LIMIT $1`,
      [Math.max(1, Math.min(1000, Math.floor(limit)))],
    );
    const features = rows.map(({ row, geometry: shapeOf }) => {
      const { fid, ...properties } = row;
      if (geometry) delete properties[geometry];
      return { type: 'Feature', id: fid, geometry: shapeOf ?? null, properties };
    });
    return { type: 'FeatureCollection', features };
  });
}
