/**
 * The imports section's plan and targets (the figures both the measurement and the report use) and
 * the shapes of what it measures: each load's figures, each file's rounds, the section's outcome.
 */

// ---- plan and targets ---------------------------------------------------------------------------
export const POINTS_SMALL = 100_000;
export const POINTS_LARGE = 1_000_000;
export const POLYGONS = 200_000;
/** Ours (into PostgreSQL) at least this share of ogr2ogr's features/s. */
export const THROUGHPUT_MIN = 1.0;
/** Ours into the embedded PostGIS at least this share of ogr2ogr's features/s into PostgreSQL. */
export const EMBEDDED_MIN = 0.6;
/** Features of each resumed load's file (CSV, GeoJSONSeq; the FeatureCollection is points_1m). */
export const RESUME_FEATURES = 1_000_000;
/** A resumed load is forced into this many runs… */
export const RESUME_STEPS = 20;
/** …and takes at most this many times the load in one run. */
export const RESUME_MAX = 1.2;
/** Peak RSS of the 1M-point load at most this many times the 100k-point one's. */
export const RSS_FLAT_MAX = 1.2;

// ---- types --------------------------------------------------------------------------------------
/** What bench/import-load.ts prints. */
export interface OurLoad {
  features: number;
  seconds: number;
  peak_rss_bytes: number;
  discover_seconds: number;
  load_seconds: number;
  read_seconds: number;
  write_chunk_seconds: number;
  chunks: number;
  finalize_seconds: number;
  rows_loaded_seconds: number;
  discovered_features: number;
  /** The runs it was forced into (1: one loadImport) and the loadImport calls it took. */
  steps: number;
  runs: number;
  step_seconds: number[];
  fields: string[];
  geometry_type: string | null;
  warnings: string[];
  schema: string;
  table: string;
  /** Wall time of the child process (node startup and the bundle's import included), measured here. */
  process_seconds: number;
  count: Count;
}

export interface GdalLoad {
  seconds: number;
  /** null when /usr/bin/time isn't there. */
  peak_rss_bytes: number | null;
  count: Count;
}

export interface Count {
  rows: number;
  geometries: number;
}

export interface FileRun {
  key: string;
  label: string;
  file: string;
  bytes: number;
  features: number;
  /** One per round that finished. */
  ours: OurLoad[];
  gdal: GdalLoad[];
  /** Failed loads and wrong row counts: any of them fails the measurement. */
  oursProblems: string[];
  gdalProblems: string[];
}

/** Ours into the embedded PostGIS, one file. */
export interface EmbeddedRun {
  key: string;
  loads: OurLoad[];
  problems: string[];
}

/** One file loaded in one run and in RESUME_STEPS runs (ours, into PostgreSQL). */
export interface ResumeRun {
  key: string;
  label: string;
  file: string;
  bytes: number;
  features: number;
  one: OurLoad[];
  stepped: OurLoad[];
  problems: string[];
}

export interface ImportsOutcome {
  scale: number;
  rounds: number;
  runs: FileRun[];
  resumes: ResumeRun[];
  embedded: {
    description: string;
    startMs: number;
    runs: EmbeddedRun[];
    /** Set when it could not be started (its loads are then not measured). */
    error?: string;
  };
  /** Set when the section could not run at all (no PostgreSQL…). */
  error?: string;
  /** What is missing for the GDAL comparison (its targets then FAIL, not measured); undefined when it ran. */
  gdalSkipped?: string;
  gdalVersion?: string;
  timeRss: boolean;
  postgres: string;
  postgresStartMs: number;
  generateMs: number;
  ms: number;
  load: { start: number[]; end: number[] };
}
