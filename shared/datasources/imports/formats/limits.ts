/** Limits the format readers enforce on an upload (ADR 0084). */

/** The limits a read runs under; the defaults below, overridable per call (tests, operators). */
export interface ImportLimits {
  /** Entries a zip may hold at most. */
  maxZipEntries: number;
  /** Bytes all entries of a zip may inflate to at most (declared and actually inflated). */
  maxZipTotalBytes: number;
  /** Largest uncompressed/compressed ratio of one entry (only checked above `ratioMinBytes`). */
  maxCompressionRatio: number;
  /** Entries at most this large are exempt from the ratio check (small files compress well). */
  ratioMinBytes: number;
  /** Bytes of one feature (a JSON feature, a CSV record, an NDJSON line, a GeoPackage row) at most. */
  maxFeatureBytes: number;
  /** Fields (attribute columns) of one layer at most: PostgreSQL tables hold at most 1600 columns. */
  maxFields: number;
  /**
   * Longest the reader's thread may run without coming back to its event loop (one synchronous
   * step: a chunk, a feature, a SQLite page) before it is stopped as 'file_too_complex' (ADR 0107).
   */
  maxStepMs: number;
  /** Longest one discovery may take in all (Lambda's own maximum, so it only bites locally). */
  maxDiscoveryMs: number;
  /** Heap (old generation) of the reader's thread at most, in MB; more stops it as 'file_too_complex'. */
  readerHeapMb: number;
}

/** At most 1000 entries in a zip. */
export const MAX_ZIP_ENTRIES = 1000;
/** At most 4 GiB inflated from a zip. */
export const MAX_ZIP_TOTAL_BYTES = 4 * 1024 ** 3;
/** At most 100:1 compression for an entry above 1 MiB. */
export const MAX_COMPRESSION_RATIO = 100;
/** Entries up to 1 MiB may compress better than `MAX_COMPRESSION_RATIO`. */
export const RATIO_MIN_BYTES = 1024 ** 2;
/** At most 64 MiB in one feature. */
export const MAX_FEATURE_BYTES = 64 * 1024 ** 2;

/** At most 1000 fields in a layer. */
export const MAX_FIELDS = 1000;
/**
 * At most 60 s in one synchronous step of a reader: a legit 64 MiB GeoJSON feature takes about 10 s
 * to become WKB (wkx) on one vCPU, 30 s on a loaded one.
 */
export const MAX_STEP_MS = 60_000;
/** At most 15 minutes for one discovery. */
export const MAX_DISCOVERY_MS = 15 * 60_000;
/** At most 1 GiB of heap in the reader's thread (the import step has 2 GiB). */
export const READER_HEAP_MB = 1024;

/** The default limits. */
export const DEFAULT_LIMITS: Readonly<ImportLimits> = Object.freeze({
  maxZipEntries: MAX_ZIP_ENTRIES,
  maxZipTotalBytes: MAX_ZIP_TOTAL_BYTES,
  maxCompressionRatio: MAX_COMPRESSION_RATIO,
  ratioMinBytes: RATIO_MIN_BYTES,
  maxFeatureBytes: MAX_FEATURE_BYTES,
  maxFields: MAX_FIELDS,
  maxStepMs: MAX_STEP_MS,
  maxDiscoveryMs: MAX_DISCOVERY_MS,
  readerHeapMb: READER_HEAP_MB,
});

/** The defaults with the given overrides. */
export const limitsOf = (overrides?: Partial<ImportLimits>): ImportLimits => ({
  ...DEFAULT_LIMITS,
  ...overrides,
});

/** Bytes read from a file per chunk. */
export const READ_CHUNK_BYTES = 1024 ** 2;
