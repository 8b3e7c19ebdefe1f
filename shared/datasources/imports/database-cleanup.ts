/**
 * Cleaning up after an import in the import database: its staging schema after a cancel or a
 * failure, everything it left (schemas, replaced generations, its reader login) when it is deleted,
 * and the list of import schemas a sweep compares with the imports it knows.
 */
import { escapeIdentifier as ident } from '../pg-driver.ts';
import { type ImportConnection, STATEMENT_TIMEOUT_MS } from './database-connection.ts';
import { fence } from './database-fences.ts';
import { importSchemas } from './database-names.ts';
import { revertTargets } from './generations.ts';
import { importHex, READER_ROLES_SCHEMA } from './readers.ts';

/** Drops the staging schema (tables, checkpoints), after fencing off runs older than `run`. Idempotent. */
export function dropStaging(s: ImportConnection, importId: string, run?: number): Promise<void> {
  const { staging } = importSchemas(importId);
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    if (run !== undefined) await fence(s, importId, run);
    await s.dropSchemas([staging]);
  });
}

/**
 * Drops the staging and the published schema, then the import's reader login (ADR 0105) — after
 * undoing the import's replaces and appends (ADR 0127), whose previous generations live in its
 * schema. Idempotent; `run` fences as dropStaging does.
 */
export function dropAll(s: ImportConnection, importId: string, run?: number): Promise<void> {
  const { staging, published } = importSchemas(importId);
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    if (run !== undefined) await fence(s, importId, run);
    await revertTargets(s, importId, { published });
    await s.dropSchemas([staging, published]);
    await s.query(`SELECT ${ident(READER_ROLES_SCHEMA)}.drop_reader($1)`, [importHex(importId)]);
  });
}

/** Every schema named import_% with its tables; an empty schema appears once with table ''. */
export function importRelations(s: ImportConnection): Promise<{ schema: string; table: string }[]> {
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    const { rows } = await s.query<{ schema: string; table: string }>(
      `SELECT n.nspname AS schema, coalesce(c.relname, '') AS "table"
       FROM pg_catalog.pg_namespace n
       LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
       WHERE n.nspname LIKE 'import\\_%'
       ORDER BY 1, 2`,
    );
    return rows;
  });
}
