/**
 * A layer's load state in the import database (ADR 0085, ADR 0143): one row per layer in the
 * staging schema's checkpoint table, committed together with each chunk's rows, and where a
 * layer's table is (staged or published).
 */
import { escapeIdentifier as ident } from '../pg-driver.ts';
import { type ImportConnection, STATEMENT_TIMEOUT_MS } from './database-connection.ts';
import { importSchemas } from './database-names.ts';

/** What finalizeLayer reports (also stored with the checkpoint, so a second call answers the same). */
export interface FinalizedLayer {
  rows: number;
  /** Invalid geometries left in the table (make_valid off). */
  invalid: number;
  /** Invalid geometries repaired by ST_MakeValid (make_valid on). */
  repaired: number;
  /** [min_x, min_y, max_x, max_y] in the table's SRID; null without geometries. */
  extent: [number, number, number, number] | null;
  /** The SRID of the geometry column; null without geometry or when the CRS is unknown. */
  srid: number | null;
  /** The typmod type (`MultiPolygon`, `PointZ`); null without geometry. */
  geometry_type: string | null;
  /** The first invalid geometry and why (ST_IsValidReason without the location). */
  first_invalid?: { fid: number; reason: string };
}

/** A layer's load state. */
export interface Checkpoint {
  features: number;
  bytes: number;
  /**
   * The file offset where the next feature begins, when the reader said (ADR 0143): a resumed load
   * reads on from there. Null: it skips `features` features from the top.
   */
  offset: number | null;
  /** With `offset`: the lines before it as the reader numbers them; null: the reader counts them. */
  lines: number | null;
  finalized: boolean;
  /** Values per column that didn't fit the column type (left NULL), so far. */
  misfits: Record<string, number>;
  result: FinalizedLayer | null;
}

/** The checkpoint table: `$` keeps it out of reach of layerTableName. */
const CHECKPOINTS = 'geoplane$checkpoint';

interface CheckpointRow {
  features: string;
  bytes: string;
  resume_offset: string | null;
  resume_lines: string | null;
  finalized: boolean;
  misfits: Record<string, number> | null;
  result: FinalizedLayer | null;
}

/** A layer's checkpoint with nothing staged. */
export const EMPTY_CHECKPOINT: Checkpoint = {
  features: 0,
  bytes: 0,
  offset: null,
  lines: null,
  finalized: false,
  misfits: {},
  result: null,
};

/** The import's checkpoint table, quoted. */
export function checkpointTable(importId: string): string {
  return `${ident(importSchemas(importId).staging)}.${ident(CHECKPOINTS)}`;
}

/** Where the table is: 'staging', 'published' or undefined. */
export async function locate(
  s: ImportConnection,
  importId: string,
  table: string,
): Promise<'staging' | 'published' | undefined> {
  const { staging, published } = importSchemas(importId);
  const { rows } = await s.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_catalog.pg_class c
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relname = $1 AND n.nspname IN ($2, $3) AND c.relkind = 'r'`,
    [table, staging, published],
  );
  if (rows.some((r) => r.schema === staging)) return 'staging';
  return rows.length > 0 ? 'published' : undefined;
}

/** The staged layer's checkpoint row (locked with `forUpdate`); undefined when none. */
export async function readCheckpoint(
  s: ImportConnection,
  importId: string,
  table: string,
  forUpdate = false,
): Promise<Checkpoint | undefined> {
  const checkpoints = checkpointTable(importId);
  const exists = await s.query<{ oid: string | null }>('SELECT to_regclass($1)::oid::text AS oid', [
    checkpoints,
  ]);
  if (!exists.rows[0]?.oid) return undefined;
  const { rows } = await s.query<CheckpointRow>(
    // The resume columns read through to_jsonb: a checkpoint table from before ADR 0143 has neither.
    `SELECT features::text, bytes::text, to_jsonb(c) ->> 'resume_offset' AS resume_offset,
            to_jsonb(c) ->> 'resume_lines' AS resume_lines, finalized, misfits, result
     FROM ${checkpoints} c
     WHERE table_name = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [table],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    features: Number(row.features),
    bytes: Number(row.bytes),
    offset: row.resume_offset === null ? null : Number(row.resume_offset),
    lines: row.resume_lines === null ? null : Number(row.resume_lines),
    finalized: row.finalized,
    misfits: row.misfits ?? {},
    result: row.result,
  };
}

/** The layer's checkpoint, in its own transaction; a published table counts as finalized with its row count. */
export function checkpoint(s: ImportConnection, importId: string, table: string): Promise<Checkpoint> {
  return s.tx(STATEMENT_TIMEOUT_MS, () => checkpointIn(s, importId, table));
}

/** checkpoint in the caller's transaction. */
export async function checkpointIn(
  s: ImportConnection,
  importId: string,
  table: string,
): Promise<Checkpoint> {
  const staged = await readCheckpoint(s, importId, table);
  if (staged) return staged;
  if ((await locate(s, importId, table)) === 'published') {
    const { published } = importSchemas(importId);
    const { rows } = await s.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${ident(published)}.${ident(table)}`,
    );
    return { ...EMPTY_CHECKPOINT, features: Number(rows[0]?.n ?? 0), finalized: true };
  }
  return { ...EMPTY_CHECKPOINT };
}

/**
 * Creates the checkpoint table (or adds the resume columns to one from before ADR 0143) and the
 * layer's row, and returns the row locked (in the caller's transaction; the staging schema exists).
 */
export async function ensureCheckpoint(
  s: ImportConnection,
  importId: string,
  table: string,
): Promise<Checkpoint> {
  const checkpoints = checkpointTable(importId);
  await s.query(
    `CREATE TABLE IF NOT EXISTS ${checkpoints} (
       table_name text PRIMARY KEY,
       features bigint NOT NULL DEFAULT 0,
       bytes bigint NOT NULL DEFAULT 0,
       finalized boolean NOT NULL DEFAULT false,
       misfits jsonb NOT NULL DEFAULT '{}',
       result jsonb,
       resume_offset bigint,
       resume_lines bigint)`,
  );
  // A load begun before ADR 0143 goes on with the columns added (NULL: it resumes by skipping).
  await s.query(
    `ALTER TABLE ${checkpoints} ADD COLUMN IF NOT EXISTS resume_offset bigint,
       ADD COLUMN IF NOT EXISTS resume_lines bigint`,
  );
  await s.query(`INSERT INTO ${checkpoints} (table_name) VALUES ($1) ON CONFLICT DO NOTHING`, [table]);
  return (await readCheckpoint(s, importId, table, true)) as Checkpoint;
}

/**
 * Moves the checkpoint from `from` (its features) to `next`, only while it still says `from` and
 * isn't finalised; false when another run moved it (in the caller's transaction).
 */
export async function advanceCheckpoint(
  s: ImportConnection,
  importId: string,
  table: string,
  from: number,
  next: Checkpoint,
): Promise<boolean> {
  const moved = await s.query(
    `UPDATE ${checkpointTable(importId)} SET features = $2, bytes = $3, misfits = $4, resume_offset = $6,
       resume_lines = $7
     WHERE table_name = $1 AND features = $5 AND NOT finalized`,
    [table, next.features, next.bytes, JSON.stringify(next.misfits), from, next.offset, next.lines],
  );
  return moved.rowCount === 1;
}

/** Marks the layer finalised with its result (in the caller's transaction). */
export async function recordFinalized(
  s: ImportConnection,
  importId: string,
  table: string,
  result: FinalizedLayer,
): Promise<void> {
  await s.query(
    `UPDATE ${checkpointTable(importId)} SET finalized = true, result = $2 WHERE table_name = $1`,
    [table, JSON.stringify(result)],
  );
}
