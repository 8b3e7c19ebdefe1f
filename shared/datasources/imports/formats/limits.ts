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
  /** Bytes of one feature (a JSON feature, a CSV record, an NDJSON line) at most. */
  maxFeatureBytes: number;
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

/** The default limits. */
export const DEFAULT_LIMITS: Readonly<ImportLimits> = Object.freeze({
  maxZipEntries: MAX_ZIP_ENTRIES,
  maxZipTotalBytes: MAX_ZIP_TOTAL_BYTES,
  maxCompressionRatio: MAX_COMPRESSION_RATIO,
  ratioMinBytes: RATIO_MIN_BYTES,
  maxFeatureBytes: MAX_FEATURE_BYTES,
});

/** The defaults with the given overrides. */
export const limitsOf = (overrides?: Partial<ImportLimits>): ImportLimits => ({
  ...DEFAULT_LIMITS,
  ...overrides,
});

/** Bytes read from a file per chunk. */
export const READ_CHUNK_BYTES = 1024 ** 2;
