/**
 * One connection's work on the import database (see ImportDatabase.session): the statements of
 * ImportConnection plus the import's steps — checkpoints, fences, staging, finalising, publishing
 * and previews — each written in the module named for it.
 */
import type pg from 'pg';
import type { LayerPlan, SourceLayer } from '#domain/import-sources.ts';
import { type Checkpoint, checkpoint, type FinalizedLayer } from './database-checkpoints.ts';
import { ImportConnection } from './database-connection.ts';
import { fence } from './database-fences.ts';
import { finalizeLayer } from './database-finalize.ts';
import { preview } from './database-preview.ts';
import { publish } from './database-publish.ts';
import { type ChunkRows, type LayerTable, prepareLayer, writeChunk } from './database-staging.ts';

/** What a session asks of the database it belongs to (an ImportDatabase). */
export interface SessionHost {
  /**
   * True when the server takes COPY … FROM STDIN (asked once, on a session's connection). With
   * `loadPostgis`, asked again if need be, and PostGIS's library is loaded into the connection's
   * backend by the same statement.
   */
  takesCopy(session: ImportConnection, loadPostgis?: boolean): Promise<boolean>;
  /** The login (and password) the service of a published import connects as (ADR 0105). */
  reader(importId: string): { user: string; password: string };
}

/** One connection's work on the import database (see ImportDatabase.session). */
export class ImportSession extends ImportConnection {
  readonly #host: SessionHost;
  /** Readied for rows with geometries (PostGIS loaded in this backend): later layers needn't ask. */
  #readyForGeometries = false;

  constructor(client: pg.Client, host: SessionHost) {
    super(client);
    this.#host = host;
  }

  /**
   * Fences off loaders of runs older than `run` (a cancel, a failure, a reload), so a stale loader
   * can't re-create a staging schema that was just dropped (see database-fences.ts). In the
   * caller's transaction.
   */
  fence(importId: string, run: number): Promise<void> {
    return fence(this, importId, run);
  }

  /** The layer's checkpoint; a published table counts as finalized with its row count. */
  checkpoint(importId: string, table: string): Promise<Checkpoint> {
    return checkpoint(this, importId, table);
  }

  /**
   * Creates the staging schema, the checkpoint table and row, and the layer's table (re-created
   * while no row is staged, so a changed plan starts clean). Returns the checkpoint.
   */
  prepareLayer(importId: string, layer: LayerTable, run?: number): Promise<Checkpoint> {
    return prepareLayer(this, importId, layer, run);
  }

  /**
   * Readies this connection for the layer's rows before its first chunk is written: whether the
   * server takes COPY, and for a layer with geometries PostGIS's library loaded into the backend
   * (a new backend loads it on its first use of PostGIS, ~20 ms measured). The pipeline does this
   * while the reader reads the first chunk, so the first write doesn't (ADR 0143). Once per
   * connection: a later layer of the same run finds it ready.
   */
  async readyForRows(layer: LayerTable): Promise<void> {
    const geometries = layer.geometryColumn !== null;
    if (this.#readyForGeometries) return;
    await this.#host.takesCopy(this, geometries);
    this.#readyForGeometries = geometries;
  }

  /**
   * Writes one chunk and advances the checkpoint from `from` in one transaction; a second loader
   * of the same import finds the checkpoint moved and fails instead of duplicating rows. A
   * geometry PostGIS can't read throws ImportInputError naming the feature.
   */
  async writeChunk(
    importId: string,
    layer: LayerTable,
    from: Checkpoint,
    rows: ChunkRows,
    bytes: number,
  ): Promise<Checkpoint> {
    const copy = await this.#host.takesCopy(this);
    return writeChunk(this, importId, layer, from, rows, bytes, copy);
  }

  /** See ImportDatabase.finalizeLayer. */
  finalizeLayer(importId: string, plan: LayerPlan, source: SourceLayer): Promise<FinalizedLayer> {
    return finalizeLayer(this, importId, plan, source);
  }

  /** See ImportDatabase.publish. */
  publish(importId: string, tables: string[]): Promise<void> {
    return publish(this, importId, tables, this.#host.reader(importId));
  }

  /** See ImportDatabase.preview. */
  preview(
    importId: string,
    table: string,
    limit: number,
  ): Promise<{ type: 'FeatureCollection'; features: unknown[] } | undefined> {
    return preview(this, importId, table, limit);
  }
}
