/**
 * Staging an import's layers (ADR 0085): the staging schema and a layer's table, then chunks of
 * rows written through COPY (or INSERT … unnest on the embedded PostGIS), each committed together
 * with the checkpoint it advances.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { StateConflictError } from '#domain/errors.ts';
import {
  type FieldType,
  ImportInputError,
  type LayerPlan,
  type SourceLayer,
} from '#domain/import-sources.ts';
import { escapeIdentifier as ident } from '../pg-driver.ts';
import { binaryField, copyBinary, fidArray, fieldArray, textArray, wkbArray } from './binary-arrays.ts';
import {
  advanceCheckpoint,
  type Checkpoint,
  checkpointIn,
  ensureCheckpoint,
  locate,
} from './database-checkpoints.ts';
import { type ImportConnection, isDataError, STATEMENT_TIMEOUT_MS } from './database-connection.ts';
import { checkFence } from './database-fences.ts';
import { importSchemas, layerTableName } from './database-names.ts';
import type { RowBatch, RowShape, StagedColumn, StagedValue } from './staged-rows.ts';

/** The staging table of one plan layer. */
export interface LayerTable {
  /** The layer's public id, for messages. */
  label: string;
  table: string;
  columns: StagedColumn[];
  /** The geometry column; null when the layer has none. */
  geometryColumn: string | null;
  /**
   * The geometry column's type when staged: `geometry` (the finalize sets its typmod), or the
   * final typmod up front when discovery knows it and nothing at the finalize changes the
   * geometries (no repair, no reprojection): one table rewrite less (ADR 0143).
   */
  geometryType: string;
}

/** One chunk's rows, column-wise; fids run from `firstFid` on. */
export interface ChunkRows extends RowBatch {
  firstFid: number;
}

/** The unnest path's array types (the embedded PostGIS, which takes no COPY FROM STDIN). */
const ARRAY_TYPES: Record<FieldType, string> = {
  text: 'text[]',
  integer: 'integer[]',
  bigint: 'bigint[]',
  'double precision': 'double precision[]',
  boolean: 'boolean[]',
  date: 'date[]',
  timestamptz: 'timestamptz[]',
  jsonb: 'jsonb[]',
};

/** The staging table of a plan layer: included fields as columns, the geometry column when the layer has one. */
export function layerTable(layer: LayerPlan, source: SourceLayer): LayerTable {
  const geometryColumn = source.geometry_type ? (layer.geometry_column ?? 'geom') : null;
  const columns: StagedColumn[] = [];
  const seen = new Set<string>(['fid', ...(geometryColumn ? [geometryColumn] : [])]);
  for (const field of layer.fields) {
    if (!field.include) continue;
    if (seen.has(field.target)) {
      throw new ImportInputError(
        'invalid_plan',
        `layer ${layer.public_id}: the column name '${field.target}' is used twice (fid and the geometry column are taken).`,
      );
    }
    seen.add(field.target);
    const discovered = source.fields.find((f) => f.name === field.source)?.type;
    columns.push({ name: field.target, source: field.source, type: field.type ?? discovered ?? 'text' });
  }
  return {
    label: layer.public_id,
    table: layerTableName(layer.public_id),
    columns,
    geometryColumn,
    geometryType: stagedGeometryType(layer, source),
  };
}

/**
 * `geometry(type[Z], srid)` when every geometry will be staged as the finalize would leave it:
 * discovery saw one type and one dimension (`geometry_dims`), and the plan neither repairs nor
 * reprojects. PostGIS gives an SRID-less geometry the column's SRID as it goes in, as the
 * finalize's ST_SetSRID would.
 */
function stagedGeometryType(layer: LayerPlan, source: SourceLayer): string {
  const srids = layerSrids(layer, source);
  const dims = source.geometry_dims;
  if (!source.geometry_type || dims === undefined || layer.make_valid) return 'geometry';
  if (!geometriesAsDiscovered(layer, source)) return 'geometry';
  if (srids.target !== srids.source) return 'geometry';
  return geometryTypmod(typmodType(source.geometry_type, dims === 3), srids.target);
}

/**
 * True when the plan loads the geometries discovery read: a CSV layer's plan may name other
 * columns than the ones discovery found (`csv`), and what discovery learnt of its geometries
 * (`geometry_dims`, `geometry_valid`, the bbox) is then not about the ones loaded.
 */
export function geometriesAsDiscovered(layer: LayerPlan, source: SourceLayer): boolean {
  const planned = layer.csv;
  if (planned === undefined) return true;
  const found = source.csv;
  return (
    found !== undefined && planned.lat === found.lat && planned.lon === found.lon && planned.wkt === found.wkt
  );
}

/** A layer's CRS: of its coordinates (the plan's, else discovery's; 0 unknown), and the one it is loaded in. */
export function layerSrids(layer: LayerPlan, source: SourceLayer): { source: number; target: number } {
  const from = layer.source_srid ?? source.srid ?? 0;
  return { source: from, target: layer.target_srid ?? from };
}

/** The type part of a geometry typmod, as PostGIS names it (`Point`, `PointZ`). */
export const typmodType = (type: string, z: boolean): string => `${type}${z ? 'Z' : ''}`;

/** A geometry column's type with its typmod. */
export const geometryTypmod = (type: string, srid: number): string => `geometry(${type}, ${srid})`;

/**
 * Creates the staging schema, the checkpoint table and row, and the layer's table (re-created
 * while no row is staged, so a changed plan starts clean). Returns the checkpoint.
 */
export function prepareLayer(
  s: ImportConnection,
  importId: string,
  layer: LayerTable,
  run?: number,
): Promise<Checkpoint> {
  const { staging } = importSchemas(importId);
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    await checkFence(s, importId, run);
    if ((await locate(s, importId, layer.table)) === 'published') {
      return checkpointIn(s, importId, layer.table);
    }
    await s.query(`CREATE SCHEMA IF NOT EXISTS ${ident(staging)}`);
    const checkpoint = await ensureCheckpoint(s, importId, layer.table);
    if (checkpoint.features === 0 && !checkpoint.finalized) {
      const columns = [
        'fid bigint NOT NULL',
        ...layer.columns.map((c) => `${ident(c.name)} ${c.type}`),
        ...(layer.geometryColumn ? [`${ident(layer.geometryColumn)} ${layer.geometryType}`] : []),
      ];
      const relation = `${ident(staging)}.${ident(layer.table)}`;
      await s.query(`DROP TABLE IF EXISTS ${relation}`);
      await s.query(`CREATE TABLE ${relation} (${columns.join(', ')})`);
    }
    return checkpoint;
  });
}

/**
 * Writes one chunk and advances the checkpoint from `from` in one transaction. The checkpoint
 * row is updated first, only when it still says `from.features`: a second loader of the same
 * import waits for the row lock, then finds it moved and fails instead of duplicating rows.
 * `copy`: through COPY FROM STDIN (see ImportDatabase.takesCopy). A geometry PostGIS can't read
 * throws ImportInputError naming the feature.
 */
export async function writeChunk(
  s: ImportConnection,
  importId: string,
  layer: LayerTable,
  from: Checkpoint,
  rows: ChunkRows,
  bytes: number,
  copy: boolean,
): Promise<Checkpoint> {
  const { staging } = importSchemas(importId);
  const misfits = { ...from.misfits };
  for (let i = 1; i < rows.misfits.length; i += 2) {
    const column = (layer.columns[rows.misfits[i] as number] as StagedColumn).name;
    misfits[column] = (misfits[column] ?? 0) + 1;
  }
  const offset = chunkEnd(rows);
  const next: Checkpoint = {
    ...from,
    features: from.features + rows.count,
    bytes: Math.max(bytes, from.bytes),
    offset,
    lines: offset !== null ? (rows.lines[rows.count - 1] ?? null) : null,
    misfits,
  };
  try {
    await s.tx(STATEMENT_TIMEOUT_MS, async () => {
      if (!(await advanceCheckpoint(s, importId, layer.table, from.features, next))) {
        throw new StateConflictError(
          'import_checkpoint_moved',
          `layer ${layer.label}: the checkpoint is no longer at feature ${from.features} (another run is loading this import).`,
        );
      }
      if (copy) await copyRows(s, staging, layer, rows);
      else await insertRows(s, staging, layer, rows);
    });
  } catch (error) {
    if (layer.geometryColumn && isDataError(error)) await nameBadGeometry(s, layer, rows, error as Error);
    throw error;
  }
  return next;
}

/**
 * Where the feature after the chunk begins in the file: its last row's end, when every row says
 * where it ends (one that doesn't ends resuming by position, ADR 0143); else null.
 */
function chunkEnd(rows: ChunkRows): number | null {
  if (rows.count === 0) return null;
  for (let r = 0; r < rows.count; r++) if (rows.ends[r] === null || rows.ends[r] === undefined) return null;
  return rows.ends[rows.count - 1] ?? null;
}

/** The row shape of a layer's table (what the reader builds its rows for). */
export function rowShape(layer: LayerTable): RowShape {
  return { label: layer.label, columns: layer.columns, geometry: layer.geometryColumn !== null };
}

/**
 * The chunk's rows through COPY … FROM STDIN (in the caller's transaction): in the binary format
 * when every column has a binary writer and every geometry is WKB (ADR 0143's update of
 * 2026-11-30: the server reads numbers and geometries as bytes instead of parsing their text),
 * else in the text format (a date or timestamptz column, WKT geometries).
 */
async function copyRows(
  s: ImportConnection,
  staging: string,
  layer: LayerTable,
  rows: ChunkRows,
): Promise<void> {
  const names = ['fid', ...layer.columns.map((c) => c.name)];
  if (layer.geometryColumn) names.push(layer.geometryColumn);
  const copy = `COPY ${ident(staging)}.${ident(layer.table)} (${names.map((n) => ident(n)).join(', ')}) FROM STDIN`;
  const binary = copyBinary(
    rows.firstFid,
    rows.count,
    layer.columns.map((c) => c.type),
    rows.values,
    layer.geometryColumn !== null ? rows.geometries : undefined,
  );
  if (binary) await copyIn(s, `${copy} (FORMAT binary)`, binary);
  else await copyIn(s, copy, Buffer.from(copyText(rows, layer.geometryColumn !== null), 'utf8'));
}

/** Streams `bytes` into a `COPY … FROM STDIN` statement (in the caller's transaction). */
async function copyIn(s: ImportConnection, statement: string, bytes: Buffer): Promise<void> {
  await pipeline(Readable.from([bytes]), s.submit(copyFrom(statement)));
}

/** The chunk's rows as one INSERT … SELECT FROM unnest of one array per column (in the caller's transaction). */
async function insertRows(
  s: ImportConnection,
  staging: string,
  layer: LayerTable,
  rows: ChunkRows,
): Promise<void> {
  const names = ['fid', ...layer.columns.map((c) => c.name)];
  const casts = ['bigint[]', ...layer.columns.map((c) => ARRAY_TYPES[c.type])];
  // Binary arrays where the type allows (a Buffer parameter goes in binary format): the server
  // reads their elements as they are instead of parsing array literals (binary-arrays.ts).
  const values: unknown[] = [
    fidArray(rows.firstFid, rows.count),
    ...layer.columns.map((c, i) => {
      const column = rows.values[i] as StagedValue[];
      return binaryField(c.type) ? fieldArray(c.type, column) : column;
    }),
  ];
  if (layer.geometryColumn) {
    names.push(layer.geometryColumn);
    // Not geometry[]: PostGIS' geometry uses ':' as its array delimiter, so each element is cast
    // instead, from its WKB bytes (bytea) when every geometry is WKB, else from its text (WKT).
    const wkb = wkbArray(rows.geometries);
    casts.push(wkb ? 'bytea[]' : 'text[]');
    values.push(wkb ?? textArray(rows.geometries));
  }
  const aliases = names.map((_, i) => `c${i}`);
  if (layer.geometryColumn) aliases[aliases.length - 1] = 'c_geometry::geometry';
  await s.query(
    `INSERT INTO ${ident(staging)}.${ident(layer.table)} (${names.map((n) => ident(n)).join(', ')})
     SELECT ${aliases.join(', ')}
     FROM unnest(${casts.map((cast, i) => `$${i + 1}::${cast}`).join(', ')})
       AS u(${names.map((_, i) => (layer.geometryColumn && i === names.length - 1 ? 'c_geometry' : `c${i}`)).join(', ')})`,
    values,
  );
}

/** Finds the first geometry of the chunk PostGIS can't read (bisecting) and throws naming its feature. */
async function nameBadGeometry(
  s: ImportConnection,
  layer: LayerTable,
  rows: ChunkRows,
  cause: Error,
): Promise<void> {
  const fails = async (from: number, to: number): Promise<string | undefined> => {
    try {
      await s.tx(STATEMENT_TIMEOUT_MS, () =>
        s.query('SELECT count(g::geometry) FROM unnest($1::text[]) AS u(g)', [
          rows.geometries.slice(from, to),
        ]),
      );
      return undefined;
    } catch (error) {
      if (!isDataError(error)) throw error;
      return (error as Error).message;
    }
  };
  let from = 0;
  let to = rows.count;
  let message = await fails(from, to);
  if (message === undefined) return;
  while (to - from > 1) {
    const middle = Math.floor((from + to) / 2);
    const left = await fails(from, middle);
    if (left !== undefined) {
      to = middle;
      message = left;
    } else {
      from = middle;
    }
  }
  if (to - from === 1 && (await fails(from, to)) === undefined) return;
  throw new ImportInputError(
    'invalid_geometry',
    `layer ${layer.label}: feature ${rows.firstFid + from} has a geometry PostGIS can't read (${message ?? cause.message}).`,
  );
}

/**
 * The chunk's rows in COPY's text format: tab-separated, `\\N` for NULL, backslash, tab, newline
 * and carriage return escaped; fids from `firstFid` on, then the staged columns, then the geometry
 * text (hex WKB or WKT, which the geometry type's input reads).
 */
export function copyText(rows: ChunkRows, geometry: boolean): string {
  const parts: string[] = [];
  const columns = rows.values.length;
  for (let r = 0; r < rows.count; r++) {
    let line = String(rows.firstFid + r);
    for (let c = 0; c < columns; c++)
      line += `\t${copyValue((rows.values[c] as ChunkRows['values'][number])[r])}`;
    if (geometry) line += `\t${copyValue(rows.geometries[r] ?? null)}`;
    parts.push(line);
  }
  return parts.length > 0 ? `${parts.join('\n')}\n` : '';
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One value in COPY's text format. */
function copyValue(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  // String(-0) is "0": the sign of a negative zero is kept, as the binary arrays keep it.
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return COPY_SPECIAL.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string) : value;
}
