/**
 * Fences against loaders of superseded runs (a cancel, a failure, a reload): one row per import in
 * `geoplane_imports.fences` with the newest run, written under a table lock that a loader's check
 * conflicts with — so a stale loader can't re-create a staging schema that was just dropped (an
 * orphan). Table locks need no function privileges (advisory locks are revoked from PUBLIC by the
 * hardening).
 */
import { StateConflictError } from '#domain/errors.ts';
import type { ImportConnection } from './database-connection.ts';

const FENCE_SCHEMA = 'geoplane_imports';
const FENCE_TABLE = `${FENCE_SCHEMA}.fences`;

/** Fences off loaders of runs older than `run` (in the caller's transaction). */
export async function fence(s: ImportConnection, importId: string, run: number): Promise<void> {
  await fenceTable(s);
  await s.query(`LOCK TABLE ${FENCE_TABLE} IN SHARE ROW EXCLUSIVE MODE`);
  await s.query(
    `INSERT INTO ${FENCE_TABLE} (import_id, run) VALUES ($1, $2)
     ON CONFLICT (import_id) DO UPDATE SET run = greatest(${FENCE_TABLE}.run, excluded.run)`,
    [importId, run],
  );
}

/** Refuses a loader of a run older than the import's fence (in the caller's transaction, under the lock). */
export async function checkFence(
  s: ImportConnection,
  importId: string,
  run: number | undefined,
): Promise<void> {
  if (run === undefined) return;
  await fenceTable(s);
  await s.query(`LOCK TABLE ${FENCE_TABLE} IN SHARE MODE`);
  const { rows } = await s.query<{ run: number }>(`SELECT run FROM ${FENCE_TABLE} WHERE import_id = $1`, [
    importId,
  ]);
  const fenced = rows[0]?.run;
  if (fenced !== undefined && fenced > run) {
    throw new StateConflictError(
      'import_superseded',
      `Run ${run} of the import was superseded by run ${fenced} (cancelled, failed or reloaded); it stops.`,
    );
  }
}

/** Creates the fence table if needed (a concurrent creator's win is fine). */
async function fenceTable(s: ImportConnection): Promise<void> {
  await s.query('SAVEPOINT geoplane_fence');
  try {
    await s.query(`CREATE SCHEMA IF NOT EXISTS ${FENCE_SCHEMA}`);
    await s.query(
      `CREATE TABLE IF NOT EXISTS ${FENCE_TABLE} (import_id text PRIMARY KEY, run integer NOT NULL)`,
    );
    await s.query('RELEASE SAVEPOINT geoplane_fence');
  } catch (error) {
    await s.query('ROLLBACK TO SAVEPOINT geoplane_fence');
    if (!['23505', '42P06', '42P07'].includes((error as { code?: string }).code ?? '')) throw error;
  }
}
