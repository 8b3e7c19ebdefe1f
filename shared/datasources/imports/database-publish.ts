/**
 * Publishing an import (ADR 0085, ADR 0105): its finalised tables move from the staging schema
 * into `import_<hex>`, which the import's own reader login may read.
 */
import { StateConflictError } from '#domain/errors.ts';
import { escapeIdentifier as ident } from '../pg-driver.ts';
import { locate, readCheckpoint } from './database-checkpoints.ts';
import { type ImportConnection, STATEMENT_TIMEOUT_MS } from './database-connection.ts';
import { importSchemas } from './database-names.ts';
import { importHex, READER_ROLES_SCHEMA, scramVerifier } from './readers.ts';

/**
 * Idempotent, in one transaction: moves the named (finalised) tables from staging into the
 * published schema (creating it), grants USAGE/SELECT to the import's reader login (`reader`,
 * created or given its password again) and drops the staging schema with its checkpoint table (and
 * any table not named). A second call finds the tables published and grants again.
 */
export function publish(
  s: ImportConnection,
  importId: string,
  tables: string[],
  reader: { user: string; password: string },
): Promise<void> {
  const { staging, published } = importSchemas(importId);
  const serving = ident(reader.user);
  return s.tx(STATEMENT_TIMEOUT_MS, async () => {
    // The import's own login (ADR 0105): created or given its password again, through the
    // SECURITY DEFINER function of importRolesSql; the server sees only the SCRAM verifier.
    await s.query(`SELECT ${ident(READER_ROLES_SCHEMA)}.ensure_reader($1, $2)`, [
      importHex(importId),
      scramVerifier(reader.password),
    ]);
    await s.query(`CREATE SCHEMA IF NOT EXISTS ${ident(published)}`);
    for (const table of tables) {
      const where = await locate(s, importId, table);
      if (where === undefined) {
        throw new StateConflictError(
          'import_table_missing',
          `table ${table} is neither staged nor published for import ${importId}.`,
        );
      }
      if (where === 'published') continue;
      const checkpoint = await readCheckpoint(s, importId, table, true);
      if (!checkpoint?.finalized) {
        throw new StateConflictError('import_layer_not_finalized', `table ${table} is not finalised yet.`);
      }
      await s.query(`ALTER TABLE ${ident(staging)}.${ident(table)} SET SCHEMA ${ident(published)}`);
    }
    await s.query(`GRANT USAGE ON SCHEMA ${ident(published)} TO ${serving}`);
    if (tables.length > 0) {
      const list = tables.map((t) => `${ident(published)}.${ident(t)}`).join(', ');
      await s.query(`GRANT SELECT ON ${list} TO ${serving}`);
    }
    await s.dropSchemas([staging]);
  });
}
