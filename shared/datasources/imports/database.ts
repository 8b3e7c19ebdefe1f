/**
 * The import database (ADR 0085): an import's staging schema `import_staging_<hex>` (one table per
 * layer plus a checkpoint table), loaded in chunks that each commit their rows together with the
 * checkpoint, finalised (typmod, SRID, validity, primary key, GiST index, statistics) and
 * published by moving the tables into `import_<hex>`, which the serving role may read.
 *
 * One connection per session: the one a session of the same login left open, else a new one
 * (database-connection.ts); every statement runs in a short transaction with transaction-local
 * settings, so a session leaves nothing behind on it (the embedded PostGIS also shares one
 * backend's session between its connections). Outages throw UnavailableError, bad data
 * ImportInputError. Each step is written in the module named for it (database-staging,
 * -finalize, -publish, -cleanup, …); this class opens the sessions they run in.
 */
import type { LayerPlan, SourceLayer } from '#domain/import-sources.ts';
import type { TargetOutcome, TargetTable } from '#domain/import-targets.ts';
import type { FinalizedLayer } from './database-checkpoints.ts';
import { dropAll, dropStaging, importRelations } from './database-cleanup.ts';
import {
  FINALIZE_TIMEOUT_MS,
  type ImportConnection,
  type ImportDatabaseConfig,
  onConnection,
} from './database-connection.ts';
import { type ImportSchemas, importSchemas, layerTableName } from './database-names.ts';
import { ImportSession } from './database-session.ts';
import { applyTargets, expireGenerations, revertTargets } from './generations.ts';
import { withLogin } from './logins.ts';
import { readerLogin, readerPassword } from './readers.ts';

/** The import database, reached as the loader login. */
export class ImportDatabase {
  readonly #config: ImportDatabaseConfig;
  /** Whether the server takes COPY FROM STDIN (see takesCopy); undefined until asked. */
  #copy: boolean | undefined;

  constructor(config: ImportDatabaseConfig) {
    this.#config = config;
  }

  /** The import's staging and published schema names; throws on an id that isn't a UUID. */
  schemas(importId: string): ImportSchemas {
    return importSchemas(importId);
  }

  /** Table name for a plan layer (see layerTableName). */
  static tableName(publicId: string): string {
    return layerTableName(publicId);
  }

  /** Runs `work` on one connection (see onConnection); outages throw UnavailableError. */
  session<T>(work: (session: ImportSession) => Promise<T>): Promise<T> {
    return onConnection(this.#config, (client) => work(new ImportSession(client, this)));
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
    importSchemas(importId); // an id that isn't a UUID throws here, before a connection opens
    return this.session((s) => dropStaging(s, importId, run));
  }

  /**
   * Replace and append (ADR 0127), in one transaction: the staged rows of `targets` go into their
   * layers' tables (see generations.ts), previous generations recorded before `expireBefore` are
   * dropped first. Idempotent: what the ledger records is reported, not done again.
   */
  applyTargets(importId: string, targets: TargetTable[], expireBefore: Date): Promise<TargetOutcome[]> {
    const schemas = importSchemas(importId);
    return this.session((s) =>
      s.tx(FINALIZE_TIMEOUT_MS, async () => {
        await expireGenerations(s, expireBefore);
        return applyTargets(s, importId, schemas, targets);
      }),
    );
  }

  /** Undoes the import's replaces and appends, in one transaction (see generations.ts). */
  revertTargets(importId: string): Promise<TargetOutcome[]> {
    const schemas = importSchemas(importId);
    return this.session((s) => s.tx(FINALIZE_TIMEOUT_MS, () => revertTargets(s, importId, schemas)));
  }

  /**
   * Drops the staging and the published schema, then the import's reader login (ADR 0105) —
   * after undoing the import's replaces and appends (ADR 0127), whose previous generations live in
   * its schema. Idempotent; `run` fences as dropStaging does.
   */
  dropAll(importId: string, run?: number): Promise<void> {
    importSchemas(importId); // an id that isn't a UUID throws here, before a connection opens
    return this.session((s) => dropAll(s, importId, run));
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
    return this.session((s) => importRelations(s));
  }

  /**
   * True when the server takes COPY … FROM STDIN: PostgreSQL does; the embedded PostGIS (PGlite
   * behind pglite-socket, `version()` says emscripten) breaks its protocol on it, so chunks go in
   * as INSERT … unnest there. Asked once per ImportDatabase, on the session's connection; with
   * `loadPostgis` (see ImportSession.readyForRows) the statement also loads PostGIS's library into
   * the connection's backend, so it is sent whether or not the answer is known.
   */
  async takesCopy(session: ImportConnection, loadPostgis = false): Promise<boolean> {
    if (this.#copy === undefined || loadPostgis) {
      const { rows } = await session.query<{ embedded: boolean }>(
        `SELECT version() LIKE '%emscripten%' AS embedded${loadPostgis ? ', postgis_lib_version() AS postgis' : ''}`,
      );
      this.#copy = rows[0]?.embedded !== true;
    }
    return this.#copy;
  }

  /** Nothing to release: each session gives its connection back as it ends (see onConnection). */
  async close(): Promise<void> {}

  /** The login (and password) the service of a published import connects as (ADR 0105). */
  reader(importId: string): { user: string; password: string } {
    const key = this.#config.readerKey ?? this.#config.password;
    return { user: readerLogin(importId), password: readerPassword(key, importId) };
  }
}

/**
 * Runs `fn` on the import database as the loader (see `withLogin`: a refused login reads the
 * secret again and runs `fn` once more), and releases the database after it.
 */
export function withDatabase<T>(fn: (db: ImportDatabase) => Promise<T>): Promise<T> {
  return withLogin(async (connection) => {
    const db = new ImportDatabase(connection);
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  });
}
