/**
 * Replace and append in the import database (ADR 0127). An import's staged rows go into a layer
 * another import published:
 * - **replace**: a new table is built beside the layer's, shaped `LIKE` it (columns, key, indexes),
 *   and filled from staging; then, under a short ACCESS EXCLUSIVE lock, the old table moves into
 *   the replacing import's schema as its previous generation and the new one takes its name.
 * - **append**: the rows go into the layer's table with fids after its last one.
 * Each in one transaction with its row in the ledger `geoplane_imports.generations`, so readers see
 * the old or the new data, never a mix; a crash leaves either nothing or everything (and the
 * ledger says which: a repeat does nothing). Reverting undoes the ledger's rows of an import,
 * newest first, refused while a later import changed the same table.
 */

import type pg from 'pg';
import { ImportInputError } from '#domain/import-sources.ts';
import type { TargetOutcome, TargetTable } from '#domain/import-targets.ts';
import { escapeIdentifier as ident, isDatabaseError } from '../pg-driver.ts';
import { readerLogin } from './readers.ts';

/**
 * The next ledger row's number, under a lock that makes ledger writers take turns until their
 * commit (sequences' nextval is revoked from the loader by the hardening), taken last so the lock
 * is held for moments.
 */
async function nextSeq(s: ImportSession): Promise<number> {
  await s.query(`LOCK TABLE ${LEDGER} IN SHARE ROW EXCLUSIVE MODE`);
  const { rows } = await s.query<{ seq: string }>(
    `SELECT (coalesce(max(seq), 0) + 1)::text AS seq FROM ${LEDGER}`,
  );
  return Number(rows[0]?.seq ?? 1);
}

/** A session of the import database inside a transaction (ImportSession). */
interface ImportSession {
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/** The ledger: one row per (import, layer table) an import replaced or appended to. */
const LEDGER_SCHEMA = 'geoplane_imports';
const LEDGER = `${LEDGER_SCHEMA}.generations`;
const IMPORT_SCHEMA = /^import_([0-9a-f]{32})$/;

interface LedgerRow {
  seq: string;
  import_id: string;
  relation: string;
  mode: 'replace' | 'append';
  previous: string | null;
  first_fid: string | null;
  last_fid: string | null;
  rows: string;
  previous_rows: string;
  expired: boolean;
}

interface Column {
  name: string;
  type: string;
  geometry: boolean;
  geometry_type: string | null;
  srid: number | null;
}

function split(relation: string): { schema: string; table: string } {
  const [schema, table] = relation.split('.') as [string, string];
  return { schema, table };
}

function quoted(relation: string): string {
  const { schema, table } = split(relation);
  return `${ident(schema)}.${ident(table)}`;
}

function outcomeOf(row: LedgerRow): TargetOutcome {
  return {
    relation: row.relation,
    mode: row.mode,
    rows: Number(row.rows),
    previous_rows: Number(row.previous_rows),
    ...(row.first_fid !== null ? { first_fid: Number(row.first_fid) } : {}),
    ...(row.last_fid !== null ? { last_fid: Number(row.last_fid) } : {}),
  };
}

/** Creates the ledger if needed (a concurrent creator's win is fine). */
async function ledger(s: ImportSession): Promise<void> {
  await s.query('SAVEPOINT geoplane_ledger');
  try {
    await s.query(`CREATE SCHEMA IF NOT EXISTS ${LEDGER_SCHEMA}`);
    await s.query(
      `CREATE TABLE IF NOT EXISTS ${LEDGER} (
         seq bigint PRIMARY KEY,
         import_id text NOT NULL,
         relation text NOT NULL,
         mode text NOT NULL CHECK (mode IN ('replace', 'append')),
         previous text,
         first_fid bigint,
         last_fid bigint,
         rows bigint NOT NULL,
         previous_rows bigint NOT NULL,
         expired boolean NOT NULL DEFAULT false,
         created_at timestamptz NOT NULL DEFAULT now(),
         UNIQUE (import_id, relation))`,
    );
    await s.query('RELEASE SAVEPOINT geoplane_ledger');
  } catch (error) {
    await s.query('ROLLBACK TO SAVEPOINT geoplane_ledger');
    if (!['23505', '42P06', '42P07'].includes((error as { code?: string }).code ?? '')) throw error;
  }
}

async function ledgerExists(s: ImportSession): Promise<boolean> {
  const { rows } = await s.query<{ oid: string | null }>('SELECT to_regclass($1)::oid::text AS oid', [
    LEDGER,
  ]);
  return Boolean(rows[0]?.oid);
}

async function columnsOf(s: ImportSession, relation: string): Promise<Column[]> {
  const { rows } = await s.query<Column>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, t.typname = 'geometry' AS geometry,
            CASE WHEN t.typname = 'geometry' THEN postgis_typmod_type(a.atttypmod) END AS geometry_type,
            CASE WHEN t.typname = 'geometry' THEN postgis_typmod_srid(a.atttypmod) END AS srid
     FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [relation],
  );
  return rows;
}

async function exists(s: ImportSession, relation: string): Promise<boolean> {
  const { rows } = await s.query<{ oid: string | null }>('SELECT to_regclass($1)::oid::text AS oid', [
    relation,
  ]);
  return Boolean(rows[0]?.oid);
}

async function count(s: ImportSession, relation: string): Promise<number> {
  const { rows } = await s.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${relation}`);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The staged table's columns as the layer's table takes them: the select list (geometry
 * reprojected to the table's SRID, made Multi or 2D/3D as its typmod says) and the column list.
 * A column the table doesn't have, or has with another type, is refused naming both (the plan's
 * check should have caught it; the table is the final word).
 */
function mapping(staged: Column[], target: Column[], label: string): { names: string; values: string } {
  const names: string[] = [];
  const values: string[] = [];
  for (const column of staged) {
    if (column.name === 'fid') continue;
    const into = target.find((c) => c.name === column.name);
    if (!into) {
      throw new ImportInputError(
        'import_target_invalid',
        `${label} has no column '${column.name}'; change the plan's field mapping (PUT …/plan) and retry.`,
      );
    }
    if (column.geometry !== into.geometry || (!column.geometry && column.type !== into.type)) {
      throw new ImportInputError(
        'import_target_invalid',
        `column '${column.name}' of ${label} is ${into.type}, but the file's is ${column.type}; change the plan (PUT …/plan) and retry.`,
      );
    }
    let value = `s.${ident(column.name)}`;
    if (column.geometry) {
      const type = into.geometry_type ?? 'Geometry';
      if (into.srid && column.srid && into.srid !== column.srid)
        value = `ST_Transform(${value}, ${into.srid})`;
      value = /Z$/.test(type) ? `ST_Force3D(${value})` : `ST_Force2D(${value})`;
      if (/^Multi/i.test(type)) value = `ST_Multi(${value})`;
    }
    names.push(ident(column.name));
    values.push(value);
  }
  return { names: names.join(', '), values: values.join(', ') };
}

/** Runs a write that casts the file's rows into the layer's table: a value that doesn't fit is the file's fault. */
async function fitting<T>(label: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const code = isDatabaseError(error) ? (error.code ?? '') : '';
    if (!code.startsWith('22') && code !== 'XX000') throw error;
    throw new ImportInputError(
      'import_target_invalid',
      `The file's rows don't fit ${label}: ${(error as Error).message}. Change the plan (PUT …/plan) and retry.`,
    );
  }
}

/**
 * Puts the staged rows of `targets` into their tables (see the module's comment), in the caller's
 * transaction; a target the ledger already records is only reported. `published` is the importing
 * job's own schema (the previous generations go there).
 */
export async function applyTargets(
  s: ImportSession,
  importId: string,
  schemas: { staging: string; published: string },
  targets: TargetTable[],
): Promise<TargetOutcome[]> {
  await ledger(s);
  const outcomes: TargetOutcome[] = [];
  for (const target of targets) {
    const { rows: done } = await s.query<LedgerRow>(
      `SELECT * FROM ${LEDGER} WHERE import_id = $1 AND relation = $2`,
      [importId, target.relation],
    );
    if (done[0]) {
      outcomes.push(outcomeOf(done[0]));
      continue;
    }
    const { schema, table } = split(target.relation);
    const owner = IMPORT_SCHEMA.exec(schema);
    const label = `the layer's table`;
    if (!owner || !(await exists(s, target.relation))) {
      throw new ImportInputError(
        'import_target_invalid',
        'The layer to replace or append to is gone (its import was rolled back); change the plan (PUT …/plan) and retry.',
      );
    }
    const layerTable = quoted(target.relation);
    const staged = `${ident(schemas.staging)}.${ident(target.table)}`;
    const { names, values } = mapping(await columnsOf(s, staged), await columnsOf(s, target.relation), label);
    const hex = importId.replaceAll('-', '').toLowerCase();
    if (target.mode === 'append') {
      // Appends to one table take turns; readers don't wait (they see the rows at commit).
      await s.query(`LOCK TABLE ${layerTable} IN SHARE ROW EXCLUSIVE MODE`);
      const before = await count(s, layerTable);
      const { rows } = await s.query<{ base: string }>(
        `SELECT coalesce(max(fid), 0)::text AS base FROM ${layerTable}`,
      );
      const base = Number(rows[0]?.base ?? 0);
      const inserted = await fitting(label, () =>
        s.query(
          `INSERT INTO ${layerTable} (fid${names ? `, ${names}` : ''})
           SELECT s.fid + $1${values ? `, ${values}` : ''} FROM ${staged} s ORDER BY s.fid`,
          [base],
        ),
      );
      const added = inserted.rowCount ?? 0;
      const row = {
        mode: 'append' as const,
        previous: null,
        first_fid: added > 0 ? base + 1 : null,
        last_fid: added > 0 ? base + added : null,
        rows: before + added,
        previous_rows: before,
      };
      await s.query(
        `INSERT INTO ${LEDGER} (seq, import_id, relation, mode, previous, first_fid, last_fid, rows, previous_rows)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          await nextSeq(s),
          importId,
          target.relation,
          row.mode,
          row.previous,
          row.first_fid,
          row.last_fid,
          row.rows,
          row.previous_rows,
        ],
      );
      outcomes.push({
        relation: target.relation,
        mode: 'append',
        rows: row.rows,
        previous_rows: before,
        ...(added > 0 ? { first_fid: base + 1, last_fid: base + added } : {}),
      });
      continue;
    }
    // Replace: the new generation is built while readers go on reading the old one.
    const next = `gen$${hex}$${target.index}`;
    const previous = `prev$${hex}$${target.index}`;
    await s.query(`CREATE TABLE ${ident(schema)}.${ident(next)} (LIKE ${layerTable} INCLUDING ALL)`);
    const inserted = await fitting(label, () =>
      s.query(
        `INSERT INTO ${ident(schema)}.${ident(next)} (fid${names ? `, ${names}` : ''})
         SELECT s.fid${values ? `, ${values}` : ''} FROM ${staged} s ORDER BY s.fid`,
      ),
    );
    await s.query(`ANALYZE ${ident(schema)}.${ident(next)}`);
    // The swap: a moment's lock, then readers see the new table under the old name.
    // Counted before the lock: readers must not wait for a scan of the old table.
    const before = await count(s, layerTable);
    await s.query(`LOCK TABLE ${layerTable} IN ACCESS EXCLUSIVE MODE`);
    await s.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schemas.published)}`);
    await s.query(`ALTER TABLE ${layerTable} RENAME TO ${ident(previous)}`);
    await s.query(`ALTER TABLE ${ident(schema)}.${ident(previous)} SET SCHEMA ${ident(schemas.published)}`);
    await s.query(`ALTER TABLE ${ident(schema)}.${ident(next)} RENAME TO ${ident(table)}`);
    await s.query(`GRANT SELECT ON ${layerTable} TO ${ident(readerLogin(owner[1] as string))}`);
    const rows = inserted.rowCount ?? 0;
    await s.query(
      `INSERT INTO ${LEDGER} (seq, import_id, relation, mode, previous, rows, previous_rows)
       VALUES ($1, $2, $3, 'replace', $4, $5, $6)`,
      [await nextSeq(s), importId, target.relation, `${schemas.published}.${previous}`, rows, before],
    );
    outcomes.push({ relation: target.relation, mode: 'replace', rows, previous_rows: before });
  }
  return outcomes;
}

/**
 * Undoes what `applyTargets` did for the import, newest first, in the caller's transaction: an
 * append's rows are deleted by their fids, a replaced table gets its previous generation back (the
 * new one goes into this import's schema, dropped with it). A table that is gone (its import
 * rolled back) needs nothing. Refused while a later import changed the same table, or when the
 * previous generation expired. Returns what was undone.
 */
export async function revertTargets(
  s: ImportSession,
  importId: string,
  schemas: { published: string },
): Promise<TargetOutcome[]> {
  if (!(await ledgerExists(s))) return [];
  const { rows } = await s.query<LedgerRow>(
    `SELECT * FROM ${LEDGER} WHERE import_id = $1 ORDER BY seq DESC FOR UPDATE`,
    [importId],
  );
  const undone: TargetOutcome[] = [];
  const hex = importId.replaceAll('-', '').toLowerCase();
  for (const row of rows) {
    const { rows: later } = await s.query<{ import_id: string }>(
      `SELECT import_id FROM ${LEDGER} WHERE relation = $1 AND seq > $2 ORDER BY seq LIMIT 1`,
      [row.relation, row.seq],
    );
    if (later[0]) {
      throw new ImportInputError(
        'import_rollback_order',
        `Import ${later[0].import_id} changed the same layer after this one; roll it back first, then retry this rollback.`,
      );
    }
    const layerTable = quoted(row.relation);
    if (await exists(s, row.relation)) {
      if (row.mode === 'append') {
        if (row.first_fid !== null && row.last_fid !== null) {
          await s.query(`LOCK TABLE ${layerTable} IN SHARE ROW EXCLUSIVE MODE`);
          await s.query(`DELETE FROM ${layerTable} WHERE fid BETWEEN $1 AND $2`, [
            row.first_fid,
            row.last_fid,
          ]);
        }
      } else {
        if (row.expired || !row.previous || !(await exists(s, row.previous))) {
          throw new ImportInputError(
            'import_generation_expired',
            "The layer's previous data is no longer kept, so this replace can't be rolled back (that is final). To restore the earlier data, create a new import of the earlier file with mode 'replace'.",
          );
        }
        const { schema, table } = split(row.relation);
        const previous = split(row.previous);
        const discarded = `undone$${hex}$${row.seq}`;
        await s.query(`LOCK TABLE ${layerTable} IN ACCESS EXCLUSIVE MODE`);
        await s.query(`ALTER TABLE ${layerTable} RENAME TO ${ident(discarded)}`);
        await s.query(
          `ALTER TABLE ${ident(schema)}.${ident(discarded)} SET SCHEMA ${ident(schemas.published)}`,
        );
        await s.query(`ALTER TABLE ${quoted(row.previous)} SET SCHEMA ${ident(schema)}`);
        await s.query(`ALTER TABLE ${ident(schema)}.${ident(previous.table)} RENAME TO ${ident(table)}`);
      }
      undone.push({ ...outcomeOf(row), rows: await count(s, layerTable) });
    }
    await s.query(`DELETE FROM ${LEDGER} WHERE seq = $1`, [row.seq]);
  }
  return undone;
}

/**
 * Drops previous generations recorded before `before` (the retention, ADR 0127): their imports
 * can't be rolled back any more. In the caller's transaction.
 */
export async function expireGenerations(s: ImportSession, before: Date): Promise<number> {
  if (!(await ledgerExists(s))) return 0;
  const { rows } = await s.query<{ seq: string; previous: string }>(
    `SELECT seq::text, previous FROM ${LEDGER}
     WHERE mode = 'replace' AND NOT expired AND previous IS NOT NULL AND created_at < $1 FOR UPDATE SKIP LOCKED`,
    [before.toISOString()],
  );
  for (const row of rows) {
    await s.query(`DROP TABLE IF EXISTS ${quoted(row.previous)}`);
    await s.query(`UPDATE ${LEDGER} SET expired = true, previous = NULL WHERE seq = $1`, [row.seq]);
  }
  return rows.length;
}
