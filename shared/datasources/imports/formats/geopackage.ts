/**
 * GeoPackage (SQLite via node-sqlite3-wasm). A layer is a plain feature table: listed in
 * gpkg_contents with data_type 'features' and a real rowid table (not a view, a virtual or a
 * shadow table) with an INTEGER PRIMARY KEY. Anything else is left out with a warning: a view runs
 * whatever query it holds (a cross join, a recursive CTE) each time it is read (ADR 0107).
 *
 * Rows are read in keyset pages, `WHERE key > ? ORDER BY key`, a range search on the key that
 * EXPLAIN QUERY PLAN confirms before the first page. A page holds at most PAGE_ROWS rows and
 * PAGE_BYTES bytes; the sizes come from the record headers (`octet_length` reads no value) before
 * any value is read, and a row over `maxFeatureBytes` is refused. Geometry blobs are yielded as the
 * WKB after the GeoPackage header.
 *
 * The file is opened read-only through a symlink in the reader's scratch dir: node-sqlite3-wasm
 * locks with a `<file>.lock` directory beside the path it opens, so the lock (and a WAL file's
 * `-wal`) lands in the scratch dir its owner removes, never beside the upload; a reader killed
 * mid-way leaves no lock that would fail every later attempt with "database is locked".
 */
import { copyFile, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import type sqliteModule from 'node-sqlite3-wasm';
import wkx from 'wkx';
import type { Discovery, FieldType, SourceFeature, SourceField } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { asInputError } from './errors.ts';
import { type ImportLimits, limitsOf } from './limits.ts';
import { geometryInfo, LayerScan, tooManyFields } from './scan.ts';
import { featureBatch, scratchDir } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

type Database = InstanceType<typeof sqliteModule.Database>;

/**
 * SQLite (WebAssembly), loaded on the first GeoPackage: importing it reads its .wasm at once, and
 * only the format reader's worker bundle ships that file (ADR 0084, 0107).
 */
let sqlite: typeof sqliteModule | undefined;
async function loadSqlite(): Promise<typeof sqliteModule> {
  sqlite ??= ((await import('node-sqlite3-wasm')) as { default: typeof sqliteModule }).default;
  return sqlite;
}
type Row = Record<string, unknown>;
type Key = number | bigint;

/** Rows of one page at most. */
const PAGE_ROWS = 1000;
/** Bytes of the values of one page at most (a page holds at least one row). */
const PAGE_BYTES = 16 * 1024 ** 2;
/** Keys walked per query when skipping to a checkpoint. */
const SKIP_STEP = 50_000;
/** Feature tables a GeoPackage may list at most (as many as a zip may hold entries). */
export const MAX_GPKG_LAYERS = 1000;
/** Below every rowid (-2^63 included): the lower bound of the first page. */
const BEFORE_ALL_KEYS = -1e19;
/** The metadata tables read; each must be a real table (a view could run any query). */
const METADATA_TABLES = ['gpkg_contents', 'gpkg_geometry_columns', 'gpkg_spatial_ref_sys'];
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
  /** Keys, in order, with the bytes of each row's values: one page ahead (`key > ?`). */
  sizesSql: string;
  /** The rows of a page (`key > ? AND key <= ?`). */
  pageSql: string;
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

/** An open GeoPackage; `close` also removes the scratch dir its lock lives in. */
interface OpenGeoPackage {
  db: Database;
  close(): Promise<void>;
}

/** Opens the file read-only through a symlink (or, where links fail, a copy) in a fresh scratch dir. */
async function openGeoPackage(path: string): Promise<OpenGeoPackage> {
  const { Database } = await loadSqlite();
  const dir = await mkdtemp(join(scratchDir(), 'geoplane-gpkg-'));
  const link = join(dir, 'source.gpkg');
  let db: Database | undefined;
  try {
    await symlink(resolve(path), link).catch(() => copyFile(path, link));
    db = new Database(link, { readOnly: true, fileMustExist: true });
    // EXCLUSIVE: the lock is taken once, in the scratch dir, and a file whose header says WAL is
    // read without the shared memory this VFS lacks. No value of the file's schema may call a
    // function that isn't innocuous (trusted_schema), and nothing is written (query_only).
    db.exec(
      'PRAGMA locking_mode = EXCLUSIVE; PRAGMA query_only = ON; PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON;',
    );
  } catch (error) {
    closeQuietly(db);
    await rm(dir, { recursive: true, force: true });
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be opened');
  }
  const opened = db;
  return {
    db: opened,
    close: async () => {
      closeQuietly(opened);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const closeQuietly = (db: Database | undefined) => {
  try {
    if (db?.isOpen) db.close();
  } catch {
    // The scratch dir goes anyway; nothing of the upload is held.
  }
};

/** The kind of a table of the main schema: 'table', 'view', 'virtual', 'shadow'; undefined when there is none. */
const tableKind = (
  db: Database,
  name: string,
): { type: string; withoutRowid: boolean; columns: number } | undefined => {
  const row = (db.all('SELECT schema, type, wr, ncol FROM pragma_table_list(?)', [name]) as Row[]).find(
    (r) => r.schema === 'main',
  );
  return row
    ? { type: String(row.type), withoutRowid: Number(row.wr) !== 0, columns: Number(row.ncol) }
    : undefined;
};

/** `a + b + …` as a balanced tree (a left-deep sum of 1000 terms passes SQLite's expression depth). */
const sumOf = (terms: string[]): string => {
  if (terms.length === 0) return '0';
  if (terms.length === 1) return terms[0] as string;
  const half = Math.ceil(terms.length / 2);
  return `(${sumOf(terms.slice(0, half))} + ${sumOf(terms.slice(half))})`;
};

/** True when every step of the statement's plan is a search (no scan, no sort in a temp b-tree). */
const isRangeSearch = (db: Database, sql: string, params: unknown[]): boolean => {
  const steps = (db.all(`EXPLAIN QUERY PLAN ${sql}`, params as never) as Row[]).map((r) => String(r.detail));
  return steps.length > 0 && steps.every((s) => s.startsWith('SEARCH ') && !s.includes('TEMP B-TREE'));
};

/**
 * The layer a gpkg_contents row names, or undefined (with a warning saying why) when it isn't a
 * plain feature table with an INTEGER PRIMARY KEY that pages by key.
 */
const featureTable = (
  db: Database,
  row: Row,
  limits: ImportLimits,
  warnings: string[],
): FeatureTable | undefined => {
  const listed = String(row.name);
  const leaveOut = (why: string) => {
    warnings.push(`Layer '${listed}' is not imported: ${why}.`);
    return undefined;
  };
  const kind = tableKind(db, listed);
  if (!kind) return leaveOut('gpkg_contents lists it, but the GeoPackage has no table of that name');
  if (kind.type !== 'table') {
    return leaveOut(
      `it is a ${kind.type === 'virtual' ? 'virtual table' : kind.type}; GeoPlane imports only plain feature tables`,
    );
  }
  if (kind.withoutRowid)
    return leaveOut('it is a WITHOUT ROWID table; a feature table has an INTEGER PRIMARY KEY');
  if (kind.columns > limits.maxFields + 2) throw tooManyFields(listed, limits.maxFields);
  const columns = db.all('SELECT name, type, pk, hidden FROM pragma_table_xinfo(?)', [listed]) as Row[];
  const pks = columns.filter((c) => Number(c.pk) > 0);
  const pk = pks[0];
  if (pks.length !== 1 || !pk || String(pk.type).trim().toUpperCase() !== 'INTEGER') {
    return leaveOut('it has no INTEGER PRIMARY KEY column, which a GeoPackage feature table needs');
  }
  const key = String(pk.name);
  const named = row.geometry === null || row.geometry === undefined ? 'geom' : String(row.geometry);
  const geometryColumn = columns.find((c) => String(c.name).toLowerCase() === named.toLowerCase());
  if (!geometryColumn || Number(geometryColumn.hidden) !== 0) {
    return leaveOut(`its geometry column '${named}' is not a column of the table`);
  }
  const geometry = String(geometryColumn.name);
  const name = listed;
  let srid: number | null = null;
  const srsId = Number(row.srs_id);
  if (String(row.org ?? '').toUpperCase() === 'EPSG' && Number(row.code) > 0) srid = Number(row.code);
  else if (srsId > 0) {
    warnings.push(
      `Layer '${name}' uses a CRS (srs_id ${srsId}) without an EPSG code; give source_srid in the import plan.`,
    );
  }
  const fields: SourceField[] = [];
  const booleans: string[] = [];
  for (const column of columns) {
    const columnName = String(column.name);
    if (columnName === geometry || columnName === key) continue;
    // hidden 2 = a VIRTUAL generated column: reading it evaluates an expression of the file's.
    if (Number(column.hidden) === 2 || Number(column.hidden) === 1) {
      warnings.push(`Layer '${name}': the generated column '${columnName}' is not imported.`);
      continue;
    }
    const type = columnType(String(column.type ?? ''));
    if (type === 'skip') {
      warnings.push(`Layer '${name}': the BLOB column '${columnName}' is not imported.`);
      continue;
    }
    if (type === 'boolean') booleans.push(columnName);
    fields.push({ name: columnName, type });
  }
  if (fields.length > limits.maxFields) throw tooManyFields(name, limits.maxFields);
  const read = [geometry, ...fields.map((f) => f.name)];
  const k = quote(key);
  const from = `FROM ${quote(name)}`;
  const table: FeatureTable = {
    name,
    geometry,
    key,
    srid,
    fields,
    booleans,
    sizesSql: `SELECT ${k} AS k, ${sumOf(read.map((c) => `ifnull(octet_length(${quote(c)}), 0)`))} AS n ${from} WHERE ${k} > ? ORDER BY ${k} LIMIT ${PAGE_ROWS}`,
    pageSql: `SELECT ${[key, ...read].map(quote).join(', ')} ${from} WHERE ${k} > ? AND ${k} <= ? ORDER BY ${k}`,
  };
  if (
    !isRangeSearch(db, table.sizesSql, [BEFORE_ALL_KEYS]) ||
    !isRangeSearch(db, table.pageSql, [BEFORE_ALL_KEYS, 0])
  ) {
    return leaveOut('its rows cannot be read in key order without scanning the whole table');
  }
  return table;
};

/** The plain feature tables of the GeoPackage, in name order; the rest named in `warnings`. */
const featureTables = (db: Database, limits: ImportLimits, warnings: string[]): FeatureTable[] => {
  for (const name of METADATA_TABLES) {
    const kind = tableKind(db, name);
    if (kind?.type !== 'table') {
      throw new ImportInputError(
        'invalid_geopackage',
        kind
          ? `The GeoPackage's ${name} is a ${kind.type}, not a table; GeoPlane reads only GeoPackages whose metadata tables are plain tables.`
          : `The GeoPackage has no ${name} table.`,
      );
    }
  }
  const rows = db.all(
    `SELECT c.table_name AS name, c.srs_id AS srs_id, g.column_name AS geometry,
            s.organization AS org, s.organization_coordsys_id AS code
       FROM gpkg_contents c
       LEFT JOIN gpkg_geometry_columns g ON g.table_name = c.table_name
       LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = c.srs_id
      WHERE c.data_type = 'features' ORDER BY c.table_name LIMIT ${MAX_GPKG_LAYERS + 1}`,
  ) as Row[];
  if (rows.length > MAX_GPKG_LAYERS) {
    throw new ImportInputError(
      'too_many_layers',
      `The GeoPackage lists more than ${MAX_GPKG_LAYERS} feature tables (the limit); split it.`,
    );
  }
  const seen = new Set<string>();
  const tables: FeatureTable[] = [];
  for (const row of rows) {
    const name = String(row.name).toLowerCase();
    if (seen.has(name)) continue;
    seen.add(name);
    const table = featureTable(db, row, limits, warnings);
    if (table) tables.push(table);
  }
  return tables;
};

/** The key of the `skip`-th row (walked in steps of keys only), or undefined when the table is shorter. */
const keyAfter = (db: Database, table: FeatureTable, skip: number): Key | undefined => {
  const k = quote(table.key);
  let after: Key = BEFORE_ALL_KEYS;
  for (let left = skip; left > 0; ) {
    const step = Math.min(left, SKIP_STEP);
    const row = db.get(
      `SELECT max(k) AS k, count(*) AS n FROM (SELECT ${k} AS k FROM ${quote(table.name)} WHERE ${k} > ? ORDER BY ${k} LIMIT ${step})`,
      [after],
    ) as Row | null;
    if (!row || Number(row.n) < step) return undefined;
    after = row.k as Key;
    left -= step;
  }
  return after;
};

/** The first and last key of the table (two searches on the key), for progress. */
const keyRange = (db: Database, table: FeatureTable): [number, number] => {
  const k = quote(table.key);
  const first = db.get(`SELECT ${k} AS k FROM ${quote(table.name)} ORDER BY ${k} LIMIT 1`) as Row | null;
  const last = db.get(`SELECT ${k} AS k FROM ${quote(table.name)} ORDER BY ${k} DESC LIMIT 1`) as Row | null;
  return [Number(first?.k ?? 0), Number(last?.k ?? 0)];
};

/** One page of rows: the rows and the key of its last row. */
interface Page {
  rows: Row[];
  last: Key;
}

/**
 * The pages of a table in key order, after the key `after`: each at most PAGE_ROWS rows and
 * PAGE_BYTES bytes of values (sizes read first); a row over `maxFeatureBytes` is refused.
 */
function* pages(
  db: Database,
  table: FeatureTable,
  after: Key,
  first: number,
  maxFeatureBytes: number,
): Generator<Page> {
  let index = first;
  for (;;) {
    const sizes = db.all(table.sizesSql, [after]) as Row[];
    if (sizes.length === 0) return;
    let bytes = 0;
    let taken = 0;
    for (const size of sizes) {
      const n = Number(size.n);
      if (n > maxFeatureBytes) {
        throw new ImportInputError(
          'feature_too_large',
          `Feature ${index + taken} (${table.key} ${String(size.k)}) of layer '${table.name}' holds ${n} bytes, more than the limit of ${maxFeatureBytes}; split or simplify it.`,
        );
      }
      if (taken > 0 && bytes + n > PAGE_BYTES) break;
      bytes += n;
      taken++;
    }
    const last = sizes[taken - 1]?.k as Key;
    const rows = db.all(table.pageSql, [after, last]) as Row[];
    yield { rows, last };
    index += rows.length;
    if (taken === sizes.length && sizes.length < PAGE_ROWS) return;
    after = last;
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

/** The share of a table read once the page ending at `last` is done (0..1, by key). */
const shareRead = ([lo, hi]: [number, number], last: Key): number =>
  hi > lo ? Math.min(1, Math.max(0, (Number(last) - lo) / (hi - lo))) : 1;

/** Discovery of a GeoPackage: one layer per plain feature table. */
export async function discoverGeoPackage(
  path: string,
  _filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const limits = limitsOf(options.limits);
  const warnings: string[] = [];
  const { db, close } = await openGeoPackage(path);
  try {
    const tables = featureTables(db, limits, warnings);
    const layers = [];
    for (const [t, table] of tables.entries()) {
      const scan = new LayerScan(table.name, undefined, limits.maxFields);
      const range = keyRange(db, table);
      let index = 0;
      for (const page of pages(db, table, BEFORE_ALL_KEYS, 0, limits.maxFeatureBytes)) {
        for (const row of page.rows) {
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
          scan.addGeometry(index, info);
          index++;
        }
        options.signal?.throwIfAborted();
        options.onBytes?.(Math.round((sizeBytes * (t + shareRead(range, page.last))) / tables.length));
        // Back to the event loop between pages: a page is the longest synchronous step.
        await turn();
      }
      layers.push({ ...scan.result(table.srid, warnings), fields: table.fields });
    }
    options.onBytes?.(sizeBytes);
    if (layers.length === 0) {
      const why = warnings.filter((w) => w.includes('is not imported'));
      throw new ImportInputError(
        'no_features',
        `The GeoPackage holds no vector feature tables GeoPlane can import${why.length ? ` (${why.join(' ')})` : ''}.`,
      );
    }
    return { format: 'geopackage', size_bytes: sizeBytes, layers, warnings };
  } catch (error) {
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be read');
  } finally {
    await close();
  }
}

/** The features of one feature table, in primary-key order. */
export async function* readGeoPackage(
  path: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature[]> {
  const limits = limitsOf(options.limits);
  const { db, close } = await openGeoPackage(path);
  try {
    const warnings: string[] = [];
    const tables = featureTables(db, limits, warnings);
    const table = tables.find((t) => t.name === layer);
    if (!table) {
      const why = warnings.find((w) => w.startsWith(`Layer '${layer}' `));
      throw new ImportInputError(
        'unknown_layer',
        why ??
          `The GeoPackage has no feature table '${layer}' (it has ${tables.map((t) => t.name).join(', ')}).`,
      );
    }
    const sizeBytes = (await stat(path)).size;
    const range = keyRange(db, table);
    const skip = options.skip ?? 0;
    const after = skip > 0 ? keyAfter(db, table, skip) : BEFORE_ALL_KEYS;
    if (after !== undefined) {
      let index = skip;
      for (const page of pages(db, table, after, skip, limits.maxFeatureBytes)) {
        options.signal?.throwIfAborted();
        yield* featureBatch(page.rows, (row) => toFeature(table, row, index++));
        options.onBytes?.(Math.round(sizeBytes * shareRead(range, page.last)));
      }
    }
    options.onBytes?.(sizeBytes);
  } catch (error) {
    throw asInputError(error, 'invalid_geopackage', 'The GeoPackage cannot be read');
  } finally {
    await close();
  }
}
