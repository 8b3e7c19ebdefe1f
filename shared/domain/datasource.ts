/**
 * Longest SQL view text in UTF-8 bytes: the route schemas and the SQL guard both take it (ADR 0035,
 * 0073). ~1,500 lines; its worst case parses in ~100 ms.
 */
export const MAX_SQL_BYTES = 64 * 1024;

/** Connection details of a PostGIS service (the password travels separately, decrypted on use). */
export interface PostgisConnectionInfo {
  host: string;
  port: number;
  database: string;
  user: string;
  /** libpq semantics; default `prefer` (TLS when the server offers it, unverified). */
  sslmode?: 'disable' | 'prefer' | 'require' | 'verify-full';
  /** Where layers are looked for; default `['public']`. */
  schemas?: string[];
}

/** A geometry table or view a data source offers. */
export interface DiscoveredLayer {
  schema: string;
  table: string;
  /** `schema.table`, or `table` when the schema is `public`. */
  name: string;
  geometry_column: string;
  /** Upper case as GeometryType() spells it (`POINT`, `MULTIPOLYGON`), `GEOMETRY` when unconstrained. */
  geometry_type: string;
  /** The column's SRID, else the first feature's, else 4326. */
  srid: number;
  extent: { min_x: number; min_y: number; max_x: number; max_y: number } | null;
}

/** What validate-sql reports (spec 4.2). */
export type SqlValidation =
  | {
      valid: true;
      discovered: {
        columns: { name: string; type: string }[];
        geometry_column: string;
        geometry_type: string;
        srid: number;
        suggested_id_column: string;
      };
    }
  | {
      valid: false;
      error: string;
      /** Internal: the query ran past its budget and was stopped (not part of the response). */
      overran?: true;
    };

/** What validate-sql answers (spec 4.2): the validation without internal markers. */
export function sqlValidationBody(v: SqlValidation): SqlValidation {
  return v.valid ? v : { valid: false, error: v.error };
}

/**
 * Port: a live data source. Outages throw UnavailableError (503); a source that is reachable
 * but refuses us (auth, missing database) throws RuleViolationError (422).
 */
export interface DataSourceGateway {
  /**
   * Never throws for connection problems: a target that refuses, times out or isn't PostgreSQL is
   * `ok: false` with the reason (only the network policy's refusal throws).
   */
  testConnection(
    c: PostgisConnectionInfo & { password?: string },
  ): Promise<{ ok: boolean; duration_ms: number; message?: string }>;
  discoverLayers(c: PostgisConnectionInfo & { password?: string }): Promise<DiscoveredLayer[]>;
  probeLayer(
    c: PostgisConnectionInfo & { password?: string },
    sourceLayer: string,
  ): Promise<{ ok: true; layer: DiscoveredLayer } | { ok: false; reason: string }>;
  describeSql(c: PostgisConnectionInfo & { password?: string }, sql: string): Promise<SqlValidation>;
  /** False when not unique and non-null; a query that overruns its budget throws a RuleViolationError. */
  checkIdColumn(
    c: PostgisConnectionInfo & { password?: string },
    sql: string,
    idColumn: string,
  ): Promise<boolean>;
  /**
   * The SQL gate alone (no database): one read-only SELECT with allowlisted functions, naming no
   * schema but the service's `schemas` (ADR 0105).
   */
  guardSql(sql: string, schemas?: readonly string[]): Promise<{ ok: true } | { ok: false; error: string }>;
}
