/** The options every reader takes (re-exported by index.ts). */
import type { CsvGeometry } from '#domain/import-sources.ts';
import type { ImportLimits } from './limits.ts';

/** How one read of a file runs. */
export interface ReadOptions {
  /** CSV: geometry columns to use instead of the detected ones. */
  csv?: CsvGeometry;
  /** Shapefile: the code page of the .dbf text, over the .cpg and the LDID (ADR 0125). */
  encoding?: string;
  /** Skip this many features of the layer first (resume after a checkpoint) — without yielding them. */
  skip?: number;
  /**
   * With `skip`: the file offset where feature `skip` begins (the `end` of the feature before, ADR
   * 0143). Readers that resume by position start there; the others skip `skip` features.
   */
  offset?: number;
  /**
   * With `offset`: the lines before it (the `lines` of the feature before). Line-based readers
   * number on from there; without it they count the line breaks before `offset`.
   */
  lines?: number;
  /**
   * GeoJSON: a geometry's `coordinates` may come as PackedCoordinates (packed-coordinates.ts)
   * instead of arrays, for a consumer that only measures or writes them (discovery, the loader's
   * rows) in the reader's thread. Never for features that cross to another thread.
   */
  packCoordinates?: boolean;
  /** Called as the reader advances with the total bytes of the source consumed so far (monotonic, per chunk). */
  onBytes?: (bytes: number) => void;
  signal?: AbortSignal;
  /** Overrides of the default limits (DEFAULT_LIMITS). */
  limits?: Partial<ImportLimits>;
}

/** The options of discover(). */
export type DiscoverOptions = Pick<ReadOptions, 'onBytes' | 'signal' | 'limits'>;
