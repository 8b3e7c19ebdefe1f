/**
 * SQL views (ADRs 0032, 0035, 0119): validating one (the SQL guard, then its columns, geometry
 * type, SRID and a suggested id column from a `LIMIT 0` run and a one-row probe), checking its id
 * column, and the pieces the data plane's reads of a SQL view share — the subquery and the catalog
 * check of calls the guard could not decide alone.
 */
import type pg from 'pg';
import type { SqlValidation } from '#domain/datasource.ts';
import { RuleViolationError } from '#domain/errors.ts';
import { escapeIdentifier, isDatabaseError } from './pg-driver.ts';
import { checkout, giveBack, type PostgisConnection } from './postgis.ts';
import { DEFAULT_SRID, geometryTypeName, noPostgis } from './postgis-discovery.ts';
import { BudgetExceededError, type ReadOnlyQuery, readOnly } from './postgis-sessions.ts';
import { checkSql, type HiddenCalls, hiddenCallsQuery, refuseHiddenCalls } from './sql-guard.ts';

/** What describeSql found out about a SQL view. */
export type SqlDescription = SqlValidation;

/** The `LIMIT 0` run and the geometry probe of describeSql, as a whole. */
export const DESCRIBE_BUDGET_MS = 5_000;
/** The uniqueness scan of checkIdColumn. */
export const ID_CHECK_BUDGET_MS = 10_000;
/** Preferred id column names, best first (matched case-insensitively). */
const ID_NAMES = ['id', 'fid', 'gid', 'ogc_fid', 'objectid', 'feature_id'];

interface TypeRow {
  oid: number;
  name: string;
  category: string;
}

/** The JSON type a PostgreSQL type's values take in a feature's properties. */
function jsonType(type: TypeRow | undefined): string {
  if (!type) return 'string';
  if (type.category === 'A') return 'array';
  if (['int2', 'int4', 'int8'].includes(type.name)) return 'integer';
  if (type.category === 'N') return 'number';
  if (type.category === 'B') return 'boolean';
  if (type.name === 'json' || type.name === 'jsonb') return 'object';
  return 'string';
}

/**
 * Resolves what the guard could not decide from the tree alone (attribute notation, operators) in
 * this database's catalog; the refusal's message, or undefined when nothing hides a call.
 */
export async function hiddenCallRefusal(
  query: ReadOnlyQuery,
  calls: HiddenCalls,
): Promise<string | undefined> {
  if (calls.attributeNames.length === 0 && calls.operators.length === 0) return undefined;
  const { rows } = await query<{ functions: string[]; operators: string[] }>(hiddenCallsQuery, [
    calls.attributeNames,
    calls.operators,
  ]);
  return refuseHiddenCalls(rows[0] ?? { functions: [], operators: [] });
}

/** The SQL of a view as a subquery: trailing semicolons off, newlines so a `--` comment can't eat `)`. */
export function subquery(sql: string): string {
  return `(\n${sql.replace(/[\s;]+$/, '')}\n) AS q`;
}

/**
 * Validates a SQL view: the SQL gate first, then `SELECT * FROM (<sql>) q LIMIT 0` for the columns
 * and a one-row probe of the first geometry column for GeometryType() and SRID (4326 when
 * unknown), read-only and within {@link DESCRIBE_BUDGET_MS}. A refused or failing query is
 * `valid: false` with the reason; outages throw UnavailableError.
 */
export async function describeSql(c: PostgisConnection, sql: string): Promise<SqlDescription> {
  // The connection opens beside the parse (issue #27): a cold request waits for the longer of the
  // two, not for both. Nothing runs on it before the guard has said yes; a refusal gives it back.
  const connecting = checkout(c, Date.now() + DESCRIBE_BUDGET_MS);
  connecting.catch(() => {});
  let guard: Awaited<ReturnType<typeof checkSql>>;
  try {
    guard = await checkSql(sql, c.schemas);
  } catch (error) {
    giveBack(connecting);
    throw error;
  }
  if (!guard.ok) {
    giveBack(connecting);
    return { valid: false, error: guard.error };
  }
  try {
    return await readOnly(
      c,
      DESCRIBE_BUDGET_MS,
      async (query, session): Promise<SqlDescription> => {
        if (!session.postgis) return { valid: false, error: noPostgis(c).message };
        const hidden = await hiddenCallRefusal(query, guard);
        if (hidden) return { valid: false, error: hidden };
        const shape = await query(`SELECT * FROM ${subquery(sql)} LIMIT 0`);
        const fields = shape.fields;
        if (fields.length === 0) return { valid: false, error: 'The query returns no columns.' };
        const seen = new Set<string>();
        for (const field of fields) {
          if (seen.has(field.name)) {
            return { valid: false, error: `The query returns the column "${field.name}" more than once.` };
          }
          seen.add(field.name);
        }
        const types = await query<TypeRow>(
          `SELECT t.oid::int AS oid, coalesce(b.typname, t.typname) AS name, coalesce(b.typcategory, t.typcategory) AS category
         FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
         WHERE t.oid = ANY($1::oid[])`,
          [[...new Set(fields.map((f) => f.dataTypeID))]],
        );
        const typeOf = new Map(types.rows.map((t) => [t.oid, t]));
        const isGeometry = (f: pg.FieldDef) => typeOf.get(f.dataTypeID)?.name === 'geometry';
        const geometry = fields.find(isGeometry);
        if (!geometry) return { valid: false, error: 'The query must return at least one geometry column.' };
        const g = `q.${escapeIdentifier(geometry.name)}`;
        const probe = await query<{ type: string; srid: number }>(
          `SELECT GeometryType(${g}) AS type, ST_SRID(${g}) AS srid FROM ${subquery(sql)} WHERE ${g} IS NOT NULL LIMIT 1`,
        );
        let geometryType = probe.rows[0]?.type;
        let srid = probe.rows[0]?.srid ?? 0;
        if (!geometryType) {
          // No feature: what the column's type modifier says, if anything.
          const typmod = await query<{ type: string; srid: number }>(
            'SELECT postgis_typmod_type($1) AS type, postgis_typmod_srid($1) AS srid',
            [geometry.dataTypeModifier],
          );
          geometryType = geometryTypeName(typmod.rows[0]?.type ?? 'Geometry');
          srid = typmod.rows[0]?.srid ?? 0;
        }
        const columns = fields
          .filter((f) => !isGeometry(f))
          .map((f) => ({ name: f.name, type: jsonType(typeOf.get(f.dataTypeID)) }));
        return {
          valid: true,
          discovered: {
            columns,
            geometry_column: geometry.name,
            geometry_type: geometryType,
            srid: srid || DEFAULT_SRID,
            suggested_id_column: await suggestIdColumn(query, fields, typeOf),
          },
        };
      },
      connecting,
    );
  } catch (error) {
    if (error instanceof BudgetExceededError) {
      return {
        valid: false,
        error: `The query did not finish within its ${DESCRIBE_BUDGET_MS} ms budget and was stopped.`,
        overran: true,
      };
    }
    if (isDatabaseError(error)) return { valid: false, error: error.message };
    throw error;
  }
}

/**
 * An integer or uuid column named id, fid, gid, ogc_fid, objectid or feature_id (in that order),
 * else the first column taken straight from a single-column primary key or unique constraint,
 * else "".
 */
async function suggestIdColumn(
  query: ReadOnlyQuery,
  fields: pg.FieldDef[],
  typeOf: Map<number, TypeRow>,
): Promise<string> {
  const idLike = (f: pg.FieldDef) => {
    const type = typeOf.get(f.dataTypeID);
    return jsonType(type) === 'integer' || type?.name === 'uuid';
  };
  for (const name of ID_NAMES) {
    const field = fields.find((f) => f.name.toLowerCase() === name && idLike(f));
    if (field) return field.name;
  }
  const tables = [...new Set(fields.filter((f) => f.tableID > 0).map((f) => f.tableID))];
  if (tables.length === 0) return '';
  const unique = await query<{ table: number; column: number }>(
    `SELECT conrelid::int AS "table", conkey[1]::int AS "column" FROM pg_catalog.pg_constraint
     WHERE contype IN ('p', 'u') AND cardinality(conkey) = 1 AND conrelid = ANY($1::oid[])`,
    [tables],
  );
  const keys = new Set(unique.rows.map((r) => `${r.table}:${r.column}`));
  return fields.find((f) => keys.has(`${f.tableID}:${f.columnID}`))?.name ?? '';
}

/**
 * True when `idColumn` is non-null and unique over every row of the SQL view, checked read-only
 * within {@link ID_CHECK_BUDGET_MS}. A refused query, a missing column or a database error is
 * false; a spent budget throws RuleViolationError('query_budget_exceeded'); outages throw
 * UnavailableError.
 */
export async function checkIdColumn(c: PostgisConnection, sql: string, idColumn: string): Promise<boolean> {
  const guard = await checkSql(sql, c.schemas);
  if (!guard.ok) return false;
  const id = `q.${escapeIdentifier(idColumn)}`;
  try {
    return await readOnly(c, ID_CHECK_BUDGET_MS, async (query) => {
      if (await hiddenCallRefusal(query, guard)) return false;
      const { rows } = await query<{ ok: boolean }>(
        `SELECT count(*) = count(${id}) AND count(*) = count(DISTINCT ${id}) AS ok FROM ${subquery(sql)}`,
      );
      return rows[0]?.ok === true;
    });
  } catch (error) {
    if (error instanceof BudgetExceededError) throw overrun('the id_column check', ID_CHECK_BUDGET_MS);
    if (isDatabaseError(error)) return false;
    throw error;
  }
}

/** A query of a SQL view that ran past its budget (and was stopped): its own 422, not a verdict. */
function overrun(what: string, budgetMs: number): RuleViolationError {
  return new RuleViolationError(
    'query_budget_exceeded',
    `The SQL view is too slow: ${what} did not finish within its ${budgetMs} ms budget and was stopped.`,
  );
}
