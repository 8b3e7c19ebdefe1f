/**
 * The import database (ADR 0085): an import's staging schema `import_staging_<hex>` (one table per
 * layer plus a checkpoint table), loaded in chunks that each commit their rows together with the
 * checkpoint, finalised (typmod, SRID, validity, primary key, GiST index, statistics) and
 * published by moving the tables into `import_<hex>`, which the serving role may read.
 *
 * One `pg.Client` per call (connect, work, end); every statement runs in a short transaction with
 * transaction-local settings (the embedded PostGIS shares one backend's session between its
 * connections). Outages throw UnavailableError, bad data ImportInputError.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { StateConflictError, UnavailableError } from '../../domain/errors.ts';
import {
  type FieldType,
  type GeometryType,
  ImportInputError,
  type LayerPlan,
  type SourceLayer,
} from '../../domain/import-sources.ts';
import type { TargetOutcome, TargetTable } from '../../domain/import-targets.ts';
import { inSubsegment } from '../../log/tracer.ts';
import { escapeIdentifier, isDatabaseError, isPostgresOutage, loadPg } from '../pg-driver.ts';
import { applyTargets, expireGenerations, revertTargets } from './generations.ts';
import { importHex, READER_ROLES_SCHEMA, readerLogin, readerPassword, scramVerifier } from './readers.ts';

/**
 * How to reach the import database as the loader login. Each published import is read by a login
 * of its own (ADR 0105), whose password derives from the loader's.
 */
export interface ImportDatabaseConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  sslmode?: 'disable' | 'prefer' | 'require' | 'verify-full';
  /**
   * The key reader passwords are derived from (ADR 0118): the secret's `reader_key`, which a
   * rotation of the loader's password leaves alone; the loader's password when there is none.
   */
  readerKey?: string;
}

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

/** A staged column: `name` is the plan's target. */
export interface StagedColumn {
  name: string;
  /** The property name in the source. */
  source: string;
  type: FieldType;
}

/** The staging table of one plan layer. */
export interface LayerTable {
  /** The layer's public id, for messages. */
  label: string;
  table: string;
  columns: StagedColumn[];
  /** The geometry column; null when the layer has none. */
  geometryColumn: string | null;
}

/** One chunk's rows, column-wise; fids run from `firstFid` on. */
export interface ChunkRows {
  firstFid: number;
  count: number;
  /** One array per staged column (same order as LayerTable.columns). */
  values: (string | number | boolean | null)[][];
  /** Geometry text per row (hex WKB or WKT), null for no geometry. */
  geometries: (string | null)[];
  /** This chunk's misfits per column. */
  misfits: Record<string, number>;
  /** Where the feature after the chunk's last begins in the file; null when a reader didn't say. */
  end: number | null;
  /** With `end`: the lines before it, when the reader numbered them. */
  lines: number | null;
}

const CONNECT_TIMEOUT_MS = 5_000;
/** Chunks, publish, preview, cleanup. */
const STATEMENT_TIMEOUT_MS = 120_000;
/** finalizeLayer rewrites, validates and indexes the whole table. */
export const FINALIZE_TIMEOUT_MS = 15 * 60_000;
const LOCK_TIMEOUT_MS = 30_000;
/** The checkpoint table: `$` keeps it out of reach of tableName. */
const CHECKPOINTS = 'geoplane$checkpoint';
/** Where loaders of superseded runs are fenced off (one row per import; see ImportSession.fence). */
const FENCE_SCHEMA = 'geoplane_imports';
const FENCE_TABLE = `${FENCE_SCHEMA}.fences`;
const MAX_IDENTIFIER_BYTES = 63;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ident = escapeIdentifier;

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

/** True when the error says the database can't be reached or dropped the connection. */
const isOutage = (error: unknown): boolean =>
  isPostgresOutage(
    error,
    /timeout exceeded when trying to connect|connection timeout|Connection terminated|Query read timeout|not queryable/i,
  );

/**
 * The database's address, logins and the driver's words stay in the logs (the cause): an import's
 * error is shown to its workspace, and the import database is every workspace's (ADR 0105).
 */
function unavailable(error: unknown): UnavailableError {
  return new UnavailableError(
    'import_database_unavailable',
    'The import database is unavailable; the import is retried.',
    undefined,
    { cause: error },
  );
}

/** The X-Ray subsegment of one import database session (ADR 0092). */
export const POSTGIS_IMPORT_SESSION = 'postgis import-session';

/** The import database, reached as the loader login. */
export class ImportDatabase {
  readonly #config: ImportDatabaseConfig;
  /** The server refused TLS under sslmode=prefer: plain from then on. */
  #plain = false;
  /** Whether the server takes COPY FROM STDIN (see takesCopy); undefined until asked. */
  #copy: boolean | undefined;

  constructor(config: ImportDatabaseConfig) {
    this.#config = config;
  }

  /** The import's staging and published schema names; throws on an id that isn't a UUID. */
  schemas(importId: string): { staging: string; published: string } {
    if (!UUID.test(importId)) throw new Error(`not an import id: ${JSON.stringify(importId)}`);
    const hex = importId.replaceAll('-', '').toLowerCase();
    return { staging: `import_staging_${hex}`, published: `import_${hex}` };
  }

  /**
   * Table name for a plan layer: public_id lower-cased, non [a-z0-9_] → '_', a leading digit
   * prefixed with '_', at most 63 bytes. Distinct public ids may give the same name: plan
   * validation (and loadImport) refuse that.
   */
  static tableName(publicId: string): string {
    let name = publicId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
    if (name === '') name = 'layer';
    if (/^[0-9]/.test(name)) name = `_${name}`;
    return name.slice(0, MAX_IDENTIFIER_BYTES);
  }

  /** Runs `work` on one connection (connect, work, end); outages throw UnavailableError. */
  session<T>(work: (session: ImportSession) => Promise<T>): Promise<T> {
    // One X-Ray subsegment per connection and its statements (ADR 0092).
    return inSubsegment(POSTGIS_IMPORT_SESSION, () => this.#session(work));
  }

  async #session<T>(work: (session: ImportSession) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let broken: Error | undefined;
    client.on('error', (error) => {
      broken ??= error;
    });
    try {
      return await work(new ImportSession(client, this));
    } catch (error) {
      if (isOutage(error) || (broken && !(error instanceof ImportInputError))) {
        throw unavailable(broken ?? error);
      }
      throw error;
    } finally {
      await client.end().catch(() => {});
    }
  }

  async #connect(): Promise<pg.Client> {
    const c = this.#config;
    const mode = c.sslmode ?? 'prefer';
    const open = async (tls: boolean) => {
      const client = new (await loadPg()).Client({
        host: c.host,
        port: c.port,
        database: c.database,
        user: c.user,
        password: c.password,
        ssl: tls ? { rejectUnauthorized: mode === 'verify-full' } : false,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        // A client-side deadline too: a server that ignores statement_timeout can't hold a call.
        query_timeout: FINALIZE_TIMEOUT_MS + 30_000,
        application_name: 'geoplane-import',
      });
      client.on('error', () => {});
      try {
        await client.connect();
        return client;
      } catch (error) {
        await client.end().catch(() => {});
        throw error;
      }
    };
    try {
      if (mode === 'disable' || (mode === 'prefer' && this.#plain)) return await open(false);
      try {
        return await open(true);
      } catch (error) {
        if (mode !== 'prefer' || !(error instanceof Error) || !/does not support SSL/i.test(error.message)) {
          throw error;
        }
        this.#plain = true;
        return await open(false);
      }
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** Rows staged so far for the layer (the checkpoint), 0 when none; a published table counts as finalized. */
  async checkpoint(
    importId: string,
    table: string,
  ): Promise<{ features: number; bytes: number; finalized: boolean }> {
    const { features, bytes, finalized } = await this.session((s) => s.checkpoint(importId, table));
    return { features, bytes, finalized };
  }

  /**
   * Idempotent: after it, the layer's staging table has its typmod (type, SRID), invalid
   * geometries counted (or repaired when plan.make_valid), a primary key on fid and a GiST index,
   * and is ANALYZEd — all in one transaction. Returns counts and the extent (in the table's SRID).
   */
  finalizeLayer(importId: string, layer: LayerPlan, source: SourceLayer): Promise<FinalizedLayer> {
    return this.session((s) => s.finalizeLayer(importId, layer, source));
  }

  /**
   * Idempotent, in one transaction: moves the named (finalised) tables from staging into the
   * published schema (creating it), grants USAGE/SELECT to the serving role and drops the staging
   * schema with its checkpoint table (and any table not named). A second call finds the tables
   * published and grants again.
   */
  publish(importId: string, tables: string[]): Promise<void> {
    return this.session((s) => s.publish(importId, tables));
  }

  /**
   * Drops the staging schema (tables, checkpoints). Idempotent. With `run`, loaders of older runs
   * are fenced off first (see {@link ImportSession.fence}).
   */
  dropStaging(importId: string, run?: number): Promise<void> {
    const { staging } = this.schemas(importId);
    return this.session((s) =>
      s.tx(STATEMENT_TIMEOUT_MS, async () => {
        if (run !== undefined) await s.fence(importId, run);
        await s.dropSchemas([staging]);
      }),
    );
  }

  /**
   * Replace and append (ADR 0127), in one transaction: the staged rows of `targets` go into their
   * layers' tables (see generations.ts), previous generations recorded before `expireBefore` are
   * dropped first. Idempotent: what the ledger records is reported, not done again.
   */
  applyTargets(importId: string, targets: TargetTable[], expireBefore: Date): Promise<TargetOutcome[]> {
    const schemas = this.schemas(importId);
    return this.session((s) =>
      s.tx(FINALIZE_TIMEOUT_MS, async () => {
        await expireGenerations(s, expireBefore);
        return applyTargets(s, importId, schemas, targets);
      }),
    );
  }

  /** Undoes the import's replaces and appends, in one transaction (see generations.ts). */
  revertTargets(importId: string): Promise<TargetOutcome[]> {
    const schemas = this.schemas(importId);
    return this.session((s) => s.tx(FINALIZE_TIMEOUT_MS, () => revertTargets(s, importId, schemas)));
  }

  /**
   * Drops the staging and the published schema, then the import's reader login (ADR 0105) —
   * after undoing the import's replaces and appends (ADR 0127), whose previous generations live in
   * its schema. Idempotent; `run` fences as dropStaging does.
   */
  dropAll(importId: string, run?: number): Promise<void> {
    const { staging, published } = this.schemas(importId);
    return this.session((s) =>
      s.tx(STATEMENT_TIMEOUT_MS, async () => {
        if (run !== undefined) await s.fence(importId, run);
        await revertTargets(s, importId, { published });
        await s.dropSchemas([staging, published]);
        await s.query(`SELECT ${ident(READER_ROLES_SCHEMA)}.drop_reader($1)`, [importHex(importId)]);
      }),
    );
  }

  /**
   * A GeoJSON FeatureCollection of up to `limit` (1–1000) rows of the table, staged or published,
   * in fid order: id = fid, geometry in EPSG:4326 (transformed when its SRID is known and
   * another), properties = the other columns. Unknown table → undefined.
   */
  preview(
    importId: string,
    table: string,
    limit: number,
  ): Promise<{ type: 'FeatureCollection'; features: unknown[] } | undefined> {
    return this.session((s) => s.preview(importId, table, limit));
  }

  /** Every schema named import_% with its tables; an empty schema appears once with table ''. */
  importRelations(): Promise<{ schema: string; table: string }[]> {
    return this.session((s) =>
      s.tx(STATEMENT_TIMEOUT_MS, async () => {
        const { rows } = await s.query<{ schema: string; table: string }>(
          `SELECT n.nspname AS schema, coalesce(c.relname, '') AS "table"
           FROM pg_catalog.pg_namespace n
           LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
           WHERE n.nspname LIKE 'import\\_%'
           ORDER BY 1, 2`,
        );
        return rows;
      }),
    );
  }

  /**
   * True when the server takes COPY … FROM STDIN: PostgreSQL does; the embedded PostGIS (PGlite
   * behind pglite-socket, `version()` says emscripten) breaks its protocol on it, so chunks go in
   * as INSERT … unnest there. Asked once per ImportDatabase, on the session's connection.
   */
  async takesCopy(session: ImportSession): Promise<boolean> {
    if (this.#copy === undefined) {
      const { rows } = await session.query<{ embedded: boolean }>(
        "SELECT version() LIKE '%emscripten%' AS embedded",
      );
      this.#copy = rows[0]?.embedded !== true;
    }
    return this.#copy;
  }

  /** Nothing to release: every call ends its own connection. */
  async close(): Promise<void> {}

  /** The login (and password) the service of a published import connects as (ADR 0105). */
  reader(importId: string): { user: string; password: string } {
    const key = this.#config.readerKey ?? this.#config.password;
    return { user: readerLogin(importId), password: readerPassword(key, importId) };
  }
}

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
    table: ImportDatabase.tableName(layer.public_id),
    columns,
    geometryColumn,
  };
}

interface CheckpointRow {
  features: string;
  bytes: string;
  resume_offset: string | null;
  resume_lines: string | null;
  finalized: boolean;
  misfits: Record<string, number> | null;
  result: FinalizedLayer | null;
}

const EMPTY_CHECKPOINT: Checkpoint = {
  features: 0,
  bytes: 0,
  offset: null,
  lines: null,
  finalized: false,
  misfits: {},
  result: null,
};

/** One connection's work on the import database (see ImportDatabase.session). */
export class ImportSession {
  readonly #client: pg.Client;
  readonly #db: ImportDatabase;

  constructor(client: pg.Client, db: ImportDatabase) {
    this.#client = client;
    this.#db = db;
  }

  /** One statement (inside `tx`). */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return this.#client.query<R>(text, values);
  }

  /**
   * Runs `work` in one transaction with transaction-local timeouts, UTC and quiet notices; rolls
   * back on any failure (a broken connection is ended by the session, which rolls back too).
   */
  async tx<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
    await this.#client.query('BEGIN');
    try {
      await this.#client.query(
        `SET LOCAL statement_timeout = ${Math.round(timeoutMs)}; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS};
         SET LOCAL client_min_messages = warning; SET LOCAL TimeZone = 'UTC'`,
      );
      const result = await work();
      await this.#client.query('COMMIT');
      return result;
    } catch (error) {
      await this.#client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * Fences off loaders of runs older than `run` (a cancel, a failure, a reload): one row per import
   * in `geoplane_imports.fences`, written under a table lock that prepareLayer's check conflicts
   * with — so a stale loader can't re-create a staging schema that was just dropped (an orphan).
   * Table locks need no function privileges (advisory locks are revoked from PUBLIC by the
   * hardening). In the caller's transaction.
   */
  async fence(importId: string, run: number): Promise<void> {
    await this.#fenceTable();
    await this.query(`LOCK TABLE ${FENCE_TABLE} IN SHARE ROW EXCLUSIVE MODE`);
    await this.query(
      `INSERT INTO ${FENCE_TABLE} (import_id, run) VALUES ($1, $2)
       ON CONFLICT (import_id) DO UPDATE SET run = greatest(${FENCE_TABLE}.run, excluded.run)`,
      [importId, run],
    );
  }

  /** Creates the fence table if needed (a concurrent creator's win is fine). */
  async #fenceTable(): Promise<void> {
    await this.query('SAVEPOINT geoplane_fence');
    try {
      await this.query(`CREATE SCHEMA IF NOT EXISTS ${FENCE_SCHEMA}`);
      await this.query(
        `CREATE TABLE IF NOT EXISTS ${FENCE_TABLE} (import_id text PRIMARY KEY, run integer NOT NULL)`,
      );
      await this.query('RELEASE SAVEPOINT geoplane_fence');
    } catch (error) {
      await this.query('ROLLBACK TO SAVEPOINT geoplane_fence');
      if (!['23505', '42P06', '42P07'].includes((error as { code?: string }).code ?? '')) throw error;
    }
  }

  /** Refuses a loader of a run older than the import's fence (in the caller's transaction, under the lock). */
  async #checkFence(importId: string, run: number | undefined): Promise<void> {
    if (run === undefined) return;
    await this.#fenceTable();
    await this.query(`LOCK TABLE ${FENCE_TABLE} IN SHARE MODE`);
    const { rows } = await this.query<{ run: number }>(
      `SELECT run FROM ${FENCE_TABLE} WHERE import_id = $1`,
      [importId],
    );
    const fenced = rows[0]?.run;
    if (fenced !== undefined && fenced > run) {
      throw new StateConflictError(
        'import_superseded',
        `Run ${run} of the import was superseded by run ${fenced} (cancelled, failed or reloaded); it stops.`,
      );
    }
  }

  async dropSchemas(schemas: string[]): Promise<void> {
    for (const schema of schemas) await this.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  }

  /** Where the table is: 'staging', 'published' or undefined. */
  async #locate(importId: string, table: string): Promise<'staging' | 'published' | undefined> {
    const { staging, published } = this.#db.schemas(importId);
    const { rows } = await this.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relname = $1 AND n.nspname IN ($2, $3) AND c.relkind = 'r'`,
      [table, staging, published],
    );
    if (rows.some((r) => r.schema === staging)) return 'staging';
    return rows.length > 0 ? 'published' : undefined;
  }

  async #readCheckpoint(importId: string, table: string, forUpdate = false): Promise<Checkpoint | undefined> {
    const { staging } = this.#db.schemas(importId);
    const exists = await this.query<{ oid: string | null }>('SELECT to_regclass($1)::oid::text AS oid', [
      `${ident(staging)}.${ident(CHECKPOINTS)}`,
    ]);
    if (!exists.rows[0]?.oid) return undefined;
    const { rows } = await this.query<CheckpointRow>(
      // The resume columns read through to_jsonb: a checkpoint table from before ADR 0143 has neither.
      `SELECT features::text, bytes::text, to_jsonb(c) ->> 'resume_offset' AS resume_offset,
              to_jsonb(c) ->> 'resume_lines' AS resume_lines, finalized, misfits, result
       FROM ${ident(staging)}.${ident(CHECKPOINTS)} c
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

  /** The layer's checkpoint; a published table counts as finalized with its row count. */
  checkpoint(importId: string, table: string): Promise<Checkpoint> {
    return this.tx(STATEMENT_TIMEOUT_MS, () => this.#checkpointIn(importId, table));
  }

  async #checkpointIn(importId: string, table: string): Promise<Checkpoint> {
    const staged = await this.#readCheckpoint(importId, table);
    if (staged) return staged;
    if ((await this.#locate(importId, table)) === 'published') {
      const { published } = this.#db.schemas(importId);
      const { rows } = await this.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM ${ident(published)}.${ident(table)}`,
      );
      return { ...EMPTY_CHECKPOINT, features: Number(rows[0]?.n ?? 0), finalized: true };
    }
    return { ...EMPTY_CHECKPOINT };
  }

  /**
   * Creates the staging schema, the checkpoint table and row, and the layer's table (re-created
   * while no row is staged, so a changed plan starts clean). Returns the checkpoint.
   */
  prepareLayer(importId: string, layer: LayerTable, run?: number): Promise<Checkpoint> {
    const { staging } = this.#db.schemas(importId);
    const checkpoints = `${ident(staging)}.${ident(CHECKPOINTS)}`;
    return this.tx(STATEMENT_TIMEOUT_MS, async () => {
      await this.#checkFence(importId, run);
      if ((await this.#locate(importId, layer.table)) === 'published') {
        return this.#checkpointIn(importId, layer.table);
      }
      await this.query(`CREATE SCHEMA IF NOT EXISTS ${ident(staging)}`);
      await this.query(
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
      await this.query(
        `ALTER TABLE ${checkpoints} ADD COLUMN IF NOT EXISTS resume_offset bigint,
           ADD COLUMN IF NOT EXISTS resume_lines bigint`,
      );
      await this.query(`INSERT INTO ${checkpoints} (table_name) VALUES ($1) ON CONFLICT DO NOTHING`, [
        layer.table,
      ]);
      const checkpoint = (await this.#readCheckpoint(importId, layer.table, true)) as Checkpoint;
      if (checkpoint.features === 0 && !checkpoint.finalized) {
        const columns = [
          'fid bigint NOT NULL',
          ...layer.columns.map((c) => `${ident(c.name)} ${c.type}`),
          ...(layer.geometryColumn ? [`${ident(layer.geometryColumn)} geometry`] : []),
        ];
        const relation = `${ident(staging)}.${ident(layer.table)}`;
        await this.query(`DROP TABLE IF EXISTS ${relation}`);
        await this.query(`CREATE TABLE ${relation} (${columns.join(', ')})`);
      }
      return checkpoint;
    });
  }

  /**
   * Writes one chunk and advances the checkpoint from `from` in one transaction. The checkpoint
   * row is updated first, only when it still says `from.features`: a second loader of the same
   * import waits for the row lock, then finds it moved and fails instead of duplicating rows.
   * A geometry PostGIS can't read throws ImportInputError naming the feature.
   */
  async writeChunk(
    importId: string,
    layer: LayerTable,
    from: Checkpoint,
    rows: ChunkRows,
    bytes: number,
  ): Promise<Checkpoint> {
    const { staging } = this.#db.schemas(importId);
    const misfits = { ...from.misfits };
    for (const [column, n] of Object.entries(rows.misfits)) misfits[column] = (misfits[column] ?? 0) + n;
    const next: Checkpoint = {
      ...from,
      features: from.features + rows.count,
      bytes: Math.max(bytes, from.bytes),
      offset: rows.end,
      lines: rows.lines,
      misfits,
    };
    const copy = await this.#db.takesCopy(this);
    try {
      await this.tx(STATEMENT_TIMEOUT_MS, async () => {
        const moved = await this.query(
          `UPDATE ${ident(staging)}.${ident(CHECKPOINTS)} SET features = $2, bytes = $3, misfits = $4, resume_offset = $6,
             resume_lines = $7
           WHERE table_name = $1 AND features = $5 AND NOT finalized`,
          [
            layer.table,
            next.features,
            next.bytes,
            JSON.stringify(misfits),
            from.features,
            next.offset,
            next.lines,
          ],
        );
        if (moved.rowCount !== 1) {
          throw new StateConflictError(
            'import_checkpoint_moved',
            `layer ${layer.label}: the checkpoint is no longer at feature ${from.features} (another run is loading this import).`,
          );
        }
        if (copy) await this.#copyRows(staging, layer, rows);
        else await this.#insertRows(staging, layer, rows);
      });
    } catch (error) {
      if (layer.geometryColumn && isDataError(error))
        await this.#nameBadGeometry(layer, rows, error as Error);
      throw error;
    }
    return next;
  }

  /** The chunk's rows through COPY … FROM STDIN in its text format (in the caller's transaction). */
  async #copyRows(staging: string, layer: LayerTable, rows: ChunkRows): Promise<void> {
    const names = ['fid', ...layer.columns.map((c) => c.name)];
    if (layer.geometryColumn) names.push(layer.geometryColumn);
    const copy = `COPY ${ident(staging)}.${ident(layer.table)} (${names.map((n) => ident(n)).join(', ')}) FROM STDIN`;
    const text = Buffer.from(copyText(rows, layer.geometryColumn !== null), 'utf8');
    await pipeline(Readable.from([text]), this.#client.query(copyFrom(copy)));
  }

  /** The chunk's rows as one INSERT … SELECT FROM unnest of one array per column (in the caller's transaction). */
  async #insertRows(staging: string, layer: LayerTable, rows: ChunkRows): Promise<void> {
    const fids = new Array<string>(rows.count);
    for (let i = 0; i < rows.count; i++) fids[i] = String(rows.firstFid + i);
    const names = ['fid', ...layer.columns.map((c) => c.name)];
    const casts = ['bigint[]', ...layer.columns.map((c) => ARRAY_TYPES[c.type])];
    const values: unknown[] = [fids, ...rows.values];
    if (layer.geometryColumn) {
      names.push(layer.geometryColumn);
      // text[]: PostGIS' geometry uses ':' as its array delimiter, so each element is cast instead.
      casts.push('text[]');
      values.push(rows.geometries);
    }
    const aliases = names.map((_, i) => `c${i}`);
    if (layer.geometryColumn) aliases[aliases.length - 1] = 'c_geometry::geometry';
    await this.query(
      `INSERT INTO ${ident(staging)}.${ident(layer.table)} (${names.map((n) => ident(n)).join(', ')})
       SELECT ${aliases.join(', ')}
       FROM unnest(${casts.map((cast, i) => `$${i + 1}::${cast}`).join(', ')})
         AS u(${names.map((_, i) => (layer.geometryColumn && i === names.length - 1 ? 'c_geometry' : `c${i}`)).join(', ')})`,
      values,
    );
  }

  /** Finds the first geometry of the chunk PostGIS can't read (bisecting) and throws naming its feature. */
  async #nameBadGeometry(layer: LayerTable, rows: ChunkRows, cause: Error): Promise<void> {
    const fails = async (from: number, to: number): Promise<string | undefined> => {
      try {
        await this.tx(STATEMENT_TIMEOUT_MS, () =>
          this.query('SELECT count(g::geometry) FROM unnest($1::text[]) AS u(g)', [
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

  /** See ImportDatabase.finalizeLayer. */
  finalizeLayer(importId: string, plan: LayerPlan, source: SourceLayer): Promise<FinalizedLayer> {
    const layer = layerTable(plan, source);
    const { staging } = this.#db.schemas(importId);
    const relation = `${ident(staging)}.${ident(layer.table)}`;
    return this.tx(FINALIZE_TIMEOUT_MS, async () => {
      const checkpoint = await this.#readCheckpoint(importId, layer.table, true);
      if (!checkpoint) {
        if ((await this.#locate(importId, layer.table)) === 'published') {
          const { published } = this.#db.schemas(importId);
          return this.#describe(`${ident(published)}.${ident(layer.table)}`, layer, 0, 0);
        }
        throw new StateConflictError(
          'import_layer_not_staged',
          `layer ${layer.label}: nothing is staged for table ${layer.table}.`,
        );
      }
      if (checkpoint.finalized && checkpoint.result) return checkpoint.result;
      let invalid = 0;
      let repaired = 0;
      let firstInvalid: FinalizedLayer['first_invalid'];
      /** The row count and extent when the validity scan found them (no reprojection). */
      let known: { rows: number; extent: FinalizedLayer['extent'] } | undefined;
      if (layer.geometryColumn && source.geometry_type) {
        const g = ident(layer.geometryColumn);
        const sourceSrid = plan.source_srid ?? source.srid ?? 0;
        const targetSrid = plan.target_srid ?? sourceSrid;
        if (targetSrid !== sourceSrid && (sourceSrid === 0 || targetSrid === 0)) {
          throw new ImportInputError(
            'srid_required',
            `layer ${layer.label}: the CRS of the coordinates is unknown; set source_srid in the plan to reproject to EPSG:${targetSrid}.`,
          );
        }
        const wanted = [...new Set([sourceSrid, targetSrid].filter((s) => s !== 0))];
        if (wanted.length > 0) {
          const known = await this.query<{ srid: number }>(
            'SELECT srid FROM spatial_ref_sys WHERE srid = ANY($1::int[])',
            [wanted],
          );
          const missing = wanted.filter((s) => !known.rows.some((r) => r.srid === s));
          if (missing.length > 0) {
            throw new ImportInputError(
              'unknown_srid',
              `layer ${layer.label}: EPSG:${missing.join(', EPSG:')} is not a CRS PostGIS knows.`,
            );
          }
        }
        let type: GeometryType = source.geometry_type;
        const family = FAMILY[type];
        if (plan.make_valid) {
          const fix =
            family === 0 ? `ST_MakeValid(${g})` : `ST_CollectionExtract(ST_MakeValid(${g}), ${family})`;
          const result = await this.query(`UPDATE ${relation} SET ${g} = ${fix} WHERE NOT ST_IsValid(${g})`);
          repaired = result.rowCount ?? 0;
          if (repaired > 0 && SINGLE.has(type)) {
            // A repaired polygon may come apart (a bow-tie is two triangles): the column goes Multi.
            const split = await this.query(
              `SELECT 1 FROM ${relation} WHERE ST_NumGeometries(${g}) > 1 LIMIT 1`,
            );
            if (split.rows.length > 0) type = `Multi${type}` as GeometryType;
          }
        }
        // One pass for validity, Z, the row count and the extent (ADR 0143). A point is valid when
        // its x and y are finite (GEOS' own rule for points), checked without converting it to GEOS.
        const scan = await this.query<{
          invalid: string;
          first: string | null;
          z: boolean | null;
          n: string;
          min_x: number | null;
          min_y: number | null;
          max_x: number | null;
          max_y: number | null;
        }>(
          `SELECT invalid, first, z, n, ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y
           FROM (SELECT count(*) FILTER (WHERE ok IS FALSE)::text AS invalid,
                        min(fid) FILTER (WHERE ok IS FALSE)::text AS first,
                        bool_or(zm >= 2) AS z, count(*)::text AS n, ST_Extent(g) AS e
                 FROM (SELECT fid, ${g} AS g,
                              CASE WHEN ${g} IS NULL THEN NULL
                                   WHEN GeometryType(${g}) = 'POINT'
                                     THEN coalesce(abs(ST_X(${g})) < 'Infinity'::float8 AND abs(ST_Y(${g})) < 'Infinity'::float8, true)
                                   ELSE ST_IsValid(${g}) END AS ok,
                              ST_Zmflag(${g}) AS zm
                       FROM ${relation}) r) s`,
        );
        const stats = scan.rows[0];
        invalid = plan.make_valid ? 0 : Number(stats?.invalid ?? 0);
        if (invalid > 0 && stats?.first) {
          const reason = await this.query<{ reason: string }>(
            `SELECT ST_IsValidReason(${g}) AS reason FROM ${relation} WHERE fid = $1`,
            [stats.first],
          );
          firstInvalid = {
            fid: Number(stats.first),
            reason: (reason.rows[0]?.reason ?? 'invalid').replace(/\s*\[.*\]\s*$/, ''),
          };
        }
        const z = stats?.z === true;
        // Forcing 2D/3D, Multi or a collection keeps the extent; a reprojection doesn't.
        if (targetSrid === sourceSrid) {
          const { min_x, min_y, max_x, max_y } = stats ?? {};
          known = {
            rows: Number(stats?.n ?? 0),
            extent:
              min_x != null && min_y != null && max_x != null && max_y != null
                ? [min_x, min_y, max_x, max_y]
                : null,
          };
        }
        let expr = `ST_SetSRID(${z ? 'ST_Force3D' : 'ST_Force2D'}(${g}), ${sourceSrid})`;
        if (type.startsWith('Multi')) expr = `ST_Multi(${expr})`;
        else if (type === 'GeometryCollection') expr = `ST_ForceCollection(${expr})`;
        else if (plan.make_valid && repaired > 0) {
          // Repaired singles come back as one-part multis or empties.
          expr = `(SELECT CASE WHEN ST_IsEmpty(x) THEN NULL WHEN ST_NumGeometries(x) = 1 AND GeometryType(x) LIKE 'MULTI%' THEN ST_GeometryN(x, 1) ELSE x END FROM (SELECT ${expr} AS x) s)`;
        }
        if (targetSrid !== sourceSrid) expr = `ST_Transform(${expr}, ${targetSrid})`;
        const typmod = `geometry(${type}${z ? 'Z' : ''}, ${targetSrid})`;
        try {
          await this.query(`ALTER TABLE ${relation} ALTER COLUMN ${g} TYPE ${typmod} USING ${expr}`);
        } catch (error) {
          if (!isDataError(error)) throw error;
          throw new ImportInputError(
            'invalid_geometry',
            `layer ${layer.label}: the geometries don't fit ${typmod}: ${(error as Error).message}.`,
          );
        }
        await this.query(`CREATE INDEX ON ${relation} USING gist (${g})`);
      }
      await this.query(`ALTER TABLE ${relation} ADD PRIMARY KEY (fid)`);
      const result = await this.#describe(relation, layer, invalid, repaired, known);
      if (firstInvalid) result.first_invalid = firstInvalid;
      await this.query(
        `UPDATE ${ident(staging)}.${ident(CHECKPOINTS)} SET finalized = true, result = $2 WHERE table_name = $1`,
        [layer.table, JSON.stringify(result)],
      );
      await this.query(`ANALYZE ${relation}`);
      return result;
    });
  }

  /** Row count, extent, SRID and typmod type of a table (`known`: count and extent found already). */
  async #describe(
    relation: string,
    layer: LayerTable,
    invalid: number,
    repaired: number,
    known?: { rows: number; extent: FinalizedLayer['extent'] },
  ): Promise<FinalizedLayer> {
    if (!layer.geometryColumn) {
      const { rows } = await this.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${relation}`);
      return {
        rows: Number(rows[0]?.n ?? 0),
        invalid,
        repaired,
        extent: null,
        srid: null,
        geometry_type: null,
      };
    }
    if (known) {
      const { rows } = await this.query<{ srid: number | null; type: string | null }>(
        `SELECT postgis_typmod_srid(atttypmod) AS srid, postgis_typmod_type(atttypmod) AS type
         FROM pg_catalog.pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
        [relation, layer.geometryColumn],
      );
      return {
        rows: known.rows,
        invalid,
        repaired,
        extent: known.extent,
        srid: rows[0]?.srid ? rows[0].srid : null,
        geometry_type: rows[0]?.type ?? null,
      };
    }
    const g = ident(layer.geometryColumn);
    const { rows } = await this.query<{
      n: string;
      min_x: number | null;
      min_y: number | null;
      max_x: number | null;
      max_y: number | null;
      srid: number | null;
      type: string | null;
    }>(
      `SELECT n::text, ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y,
              postgis_typmod_srid(t.mod) AS srid, postgis_typmod_type(t.mod) AS type
       FROM (SELECT count(*) AS n, ST_Extent(${g}) AS e FROM ${relation}) s,
            (SELECT atttypmod AS mod FROM pg_catalog.pg_attribute
             WHERE attrelid = $1::regclass AND attname = $2) t`,
      [relation, layer.geometryColumn],
    );
    const row = rows[0];
    const extent: FinalizedLayer['extent'] =
      row && row.min_x !== null && row.min_y !== null && row.max_x !== null && row.max_y !== null
        ? [row.min_x, row.min_y, row.max_x, row.max_y]
        : null;
    return {
      rows: Number(row?.n ?? 0),
      invalid,
      repaired,
      extent,
      srid: row?.srid ? row.srid : null,
      geometry_type: row?.type ?? null,
    };
  }

  /** See ImportDatabase.publish. */
  publish(importId: string, tables: string[]): Promise<void> {
    const { staging, published } = this.#db.schemas(importId);
    const reader = this.#db.reader(importId);
    const serving = ident(reader.user);
    return this.tx(STATEMENT_TIMEOUT_MS, async () => {
      // The import's own login (ADR 0105): created or given its password again, through the
      // SECURITY DEFINER function of importRolesSql; the server sees only the SCRAM verifier.
      await this.query(`SELECT ${ident(READER_ROLES_SCHEMA)}.ensure_reader($1, $2)`, [
        importHex(importId),
        scramVerifier(reader.password),
      ]);
      await this.query(`CREATE SCHEMA IF NOT EXISTS ${ident(published)}`);
      for (const table of tables) {
        const where = await this.#locate(importId, table);
        if (where === undefined) {
          throw new StateConflictError(
            'import_table_missing',
            `table ${table} is neither staged nor published for import ${importId}.`,
          );
        }
        if (where === 'published') continue;
        const checkpoint = await this.#readCheckpoint(importId, table, true);
        if (!checkpoint?.finalized) {
          throw new StateConflictError('import_layer_not_finalized', `table ${table} is not finalised yet.`);
        }
        await this.query(`ALTER TABLE ${ident(staging)}.${ident(table)} SET SCHEMA ${ident(published)}`);
      }
      await this.query(`GRANT USAGE ON SCHEMA ${ident(published)} TO ${serving}`);
      if (tables.length > 0) {
        const list = tables.map((t) => `${ident(published)}.${ident(t)}`).join(', ');
        await this.query(`GRANT SELECT ON ${list} TO ${serving}`);
      }
      await this.dropSchemas([staging]);
    });
  }

  /** See ImportDatabase.preview. */
  preview(
    importId: string,
    table: string,
    limit: number,
  ): Promise<{ type: 'FeatureCollection'; features: unknown[] } | undefined> {
    const schemas = this.#db.schemas(importId);
    return this.tx(STATEMENT_TIMEOUT_MS, async () => {
      const where = await this.#locate(importId, table);
      if (!where) return undefined;
      const relation = `${ident(schemas[where])}.${ident(table)}`;
      const columns = await this.query<{ name: string; type: string }>(
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
      const { rows } = await this.query<{ row: Record<string, unknown>; geometry: unknown }>(
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
}

/** ST_CollectionExtract's family per type (0 = a collection: no extract). */
const FAMILY: Record<GeometryType, number> = {
  Point: 1,
  MultiPoint: 1,
  LineString: 2,
  MultiLineString: 2,
  Polygon: 3,
  MultiPolygon: 3,
  GeometryCollection: 0,
};
const SINGLE = new Set<GeometryType>(['Point', 'LineString', 'Polygon']);

/** A statement that failed on its data (class 22, PostGIS' XX000 parse errors), not on the server. */
function isDataError(error: unknown): boolean {
  if (!isDatabaseError(error)) return false;
  const code = error.code ?? '';
  return code.startsWith('22') || code === 'XX000';
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
  if (typeof value === 'number') return String(value);
  return COPY_SPECIAL.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string) : value;
}
