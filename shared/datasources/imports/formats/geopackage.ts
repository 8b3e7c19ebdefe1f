/**
 * GeoPackage (SQLite via node-sqlite3-wasm, opened read-only on the file): each vector feature
 * table is a layer; rows are read in pages by primary key so memory stays flat, and geometry blobs
 * are yielded as WKB after the GeoPackage header.
 */
import { stat } from 'node:fs/promises';
import type sqliteModule from 'node-sqlite3-wasm';
import wkx from 'wkx';
import type { Discovery, FieldType, SourceFeature, SourceField } from '../../../domain/import-sources.ts';
import { ImportInputError } from '../../../domain/import-sources.ts';
import { asInputError } from './errors.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

type Database = InstanceType<typeof sqliteModule.Database>;

/**
 * SQLite (WebAssembly), loaded on the first GeoPackage: importing it reads its .wasm at once, and
 * only the import workflow's bundle ships that file (ADR 0084).
 */
let sqlite: typeof sqliteModule | undefined;
async function loadSqlite(): Promise<typeof sqliteModule> {
  sqlite ??= ((await import('node-sqlite3-wasm')) as { default: typeof sqliteModule }).default;
  return sqlite;
}
type Row = Record<string, unknown>;

/** Rows read per query. */
const PAGE_ROWS = 1000;
/** Envelope bytes by the envelope indicator of a GeoPackage geometry header (flags bits 1-3). */
const ENVELOPE_BYTES = [0, 32, 48, 48, 64];

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The WKB inside a GeoPackage geometry blob (null for the empty-geometry flag); validates the header. */
export const gpkgWkb = (blob: Uint8Array, where: string): Uint8Array | null => {
  if (blob.length < 8 || blob[0] !== 0x47 || blob[1] !== 0x50) {
    throw new ImportInputError(
      'invalid_geometry',
      `The geometry of ${where} is not a GeoPackage geometry (no 'GP' header).`,
    );
  }
  const flags = blob[3] as number;
  const envelope = ENVELOPE_BYTES[(flags >> 1) & 0x07];
  if (envelope === undefined) {
    throw new ImportInputError(
      'invalid_geometry',
      `The geometry header of ${where} has an invalid envelope indicator.`,
    );
  }
  if (flags & 0x10) return null;
  const wkb = blob.subarray(8 + envelope);
  if (wkb.length < 5)
    throw new ImportInputError('invalid_geometry', `The geometry of ${where} is truncated.`);
  return wkb;
};

/** A feature table: its name, geometry column, primary key, SRID and attribute columns. */
interface FeatureTable {
  name: string;
  geometry: string;
  key: string;
  srid: number | null;
  fields: SourceField[];
  /** Columns whose 0/1 values are booleans. */
  booleans: string[];
}

const columnType = (declared: string): FieldType | 'skip' => {
  const type = declared.toUpperCase().replace(/\(.*$/, '').trim();
  if (type === 'INTEGER' || type === 'INT' || type === 'BIGINT') return 'bigint';
  if (type === 'MEDIUMINT' || type === 'SMALLINT' || type === 'TINYINT') return 'integer';
  if (type === 'REAL' || type === 'DOUBLE' || type === 'FLOAT') return 'double precision';
  if (type === 'BOOLEAN') return 'boolean';
  if (type === 'DATE') return 'date';
  if (type === 'DATETIME') return 'timestamptz';
  if (type === 'BLOB') return 'skip';
  return 'text';
};

const openDatabase = (path: string): Database => {
  try {
    if (!sqlite) throw new Error('SQLite is not loaded (loadSqlite first)');
    return new sqlite.Database(path, { readOnly: true, fileMustExist: true });
  } catch (error) {
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be opened');
  }
};

/** The feature tables of the GeoPackage (gpkg_contents data_type 'features'). */
const featureTables = (db: Database, warnings: string[]): FeatureTable[] => {
  const rows = db.all(
    `SELECT c.table_name AS name, c.srs_id AS srs_id, g.column_name AS geometry
       FROM gpkg_contents c LEFT JOIN gpkg_geometry_columns g ON g.table_name = c.table_name
      WHERE c.data_type = 'features' ORDER BY c.table_name`,
  ) as Row[];
  return rows.map((row) => {
    const name = String(row.name);
    const geometry = String(row.geometry ?? 'geom');
    const srsId = Number(row.srs_id);
    const srs = db.get(
      'SELECT organization AS org, organization_coordsys_id AS id FROM gpkg_spatial_ref_sys WHERE srs_id = ?',
      [srsId],
    ) as Row | null;
    let srid: number | null = null;
    if (srs && String(srs.org).toUpperCase() === 'EPSG' && Number(srs.id) > 0) srid = Number(srs.id);
    else if (srsId > 0) {
      warnings.push(
        `Layer '${name}' uses a CRS (srs_id ${srsId}) without an EPSG code; give source_srid in the import plan.`,
      );
    }
    const columns = db.all(`PRAGMA table_info(${quote(name)})`) as Row[];
    const pks = columns.filter((c) => Number(c.pk) > 0);
    const key =
      pks.length === 1 && String(pks[0]?.type).toUpperCase() === 'INTEGER' ? String(pks[0]?.name) : 'rowid';
    const fields: SourceField[] = [];
    const booleans: string[] = [];
    for (const column of columns) {
      const columnName = String(column.name);
      if (columnName === geometry || columnName === key) continue;
      const type = columnType(String(column.type ?? ''));
      if (type === 'skip') {
        warnings.push(`Layer '${name}': the BLOB column '${columnName}' is not imported.`);
        continue;
      }
      if (type === 'boolean') booleans.push(columnName);
      fields.push({ name: columnName, type });
    }
    return { name, geometry, key, srid, fields, booleans };
  });
};

/** The rows of a table in key order, in pages, starting after `skip` rows. */
function* tableRows(
  db: Database,
  table: FeatureTable,
  skip: number,
  signal?: AbortSignal,
): Generator<{ index: number; row: Row }> {
  const columns = [table.key, table.geometry, ...table.fields.map((f) => f.name)].map(quote).join(', ');
  const from = `FROM ${quote(table.name)}`;
  let last: unknown;
  let index = skip;
  if (skip > 0) {
    const start = db.get(
      `SELECT ${quote(table.key)} AS k ${from} ORDER BY ${quote(table.key)} LIMIT 1 OFFSET ?`,
      [skip - 1],
    ) as Row | null;
    if (!start) return;
    last = start.k;
  }
  for (;;) {
    signal?.throwIfAborted();
    const where = last === undefined ? '' : `WHERE ${quote(table.key)} > ?`;
    const rows = db.all(
      `SELECT ${columns} ${from} ${where} ORDER BY ${quote(table.key)} LIMIT ${PAGE_ROWS}`,
      last === undefined ? [] : [last as number],
    ) as Row[];
    for (const row of rows) yield { index: index++, row };
    if (rows.length < PAGE_ROWS) return;
    last = rows[rows.length - 1]?.[table.key];
  }
}

/** A row as a SourceFeature. */
const toFeature = (table: FeatureTable, row: Row, index: number): SourceFeature => {
  const properties: Record<string, unknown> = {};
  for (const f of table.fields) {
    const value = row[f.name];
    properties[f.name] = table.booleans.includes(f.name) && value !== null ? Boolean(value) : value;
  }
  const blob = row[table.geometry];
  const wkb =
    blob instanceof Uint8Array
      ? gpkgWkb(blob, `feature ${index} (${table.key} ${String(row[table.key])})`)
      : null;
  return { properties, geometry: wkb ? { wkb } : null };
};

/** Runs `use` over the open database, closing it afterwards; SQLite errors become ImportInputErrors. */
const withDatabase = <T>(path: string, use: (db: Database) => T): T => {
  const db = openDatabase(path);
  try {
    return use(db);
  } catch (error) {
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be read');
  } finally {
    db.close();
  }
};

/** Discovery of a GeoPackage: one layer per feature table. */
export async function discoverGeoPackage(
  path: string,
  _filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const warnings: string[] = [];
  await loadSqlite();
  const layers = withDatabase(path, (db) =>
    featureTables(db, warnings).map((table) => {
      const scan = new LayerScan(table.name);
      for (const { index, row } of tableRows(db, table, 0, options.signal)) {
        scan.count++;
        const { geometry } = toFeature(table, row, index);
        let info: ReturnType<typeof geometryInfo> | null = null;
        if (geometry && 'wkb' in geometry) {
          try {
            info = geometryInfo(
              wkx.Geometry.parse(Buffer.from(geometry.wkb)).toGeoJSON(),
              `feature ${index}`,
            );
          } catch (error) {
            throw asInputError(
              error,
              'invalid_geometry',
              `Invalid geometry in feature ${index} of layer '${table.name}'`,
            );
          }
        }
        scan.addGeometry(index, info?.type ?? null, info?.box ?? null);
      }
      return { ...scan.result(table.srid, warnings), fields: table.fields };
    }),
  );
  options.onBytes?.(sizeBytes);
  if (layers.length === 0) {
    throw new ImportInputError('no_features', 'The GeoPackage holds no vector feature tables.');
  }
  return { format: 'geopackage', size_bytes: sizeBytes, layers, warnings };
}

/** The features of one feature table, in primary-key order. */
export async function* readGeoPackage(
  path: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature> {
  await loadSqlite();
  const db = openDatabase(path);
  try {
    const tables = featureTables(db, []);
    const table = tables.find((t) => t.name === layer);
    if (!table) {
      throw new ImportInputError(
        'unknown_layer',
        `The GeoPackage has no feature table '${layer}' (it has ${tables.map((t) => t.name).join(', ')}).`,
      );
    }
    const total = Number((db.get(`SELECT count(*) AS n FROM ${quote(table.name)}`) as Row | null)?.n ?? 0);
    const sizeBytes = (await stat(path)).size;
    for (const { index, row } of tableRows(db, table, options.skip ?? 0, options.signal)) {
      if (index % PAGE_ROWS === 0) options.onBytes?.(Math.round((sizeBytes * index) / Math.max(total, 1)));
      yield toFeature(table, row, index);
    }
    options.onBytes?.(sizeBytes);
  } catch (error) {
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be read');
  } finally {
    db.close();
  }
}
