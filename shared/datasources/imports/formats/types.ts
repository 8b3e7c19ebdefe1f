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
  /** How far the consumer will read: a reader that reads ahead goes no further (ADR 0150). */
  limit?: ReadLimit;
}

/**
 * How far a consumer will read a layer (ADR 0150): the features before `until` (a count from the
 * layer's first feature, so `skip` + what the read may yield), which the consumer may move either
 * way at any time. A reader that reads ahead of its consumer (the worker thread's batches) stops
 * before feature `until` and waits for it to move or for the read to end; a consumer that won't
 * take more than one chunk more says so, and the reader's read-ahead isn't read for nothing.
 */
export class ReadLimit {
  #until = Number.POSITIVE_INFINITY;
  readonly #watchers = new Set<(until: number) => void>();

  get until(): number {
    return this.#until;
  }

  /** Moves the limit (Infinity: none) and tells whoever watches. */
  set(until: number): void {
    if (until === this.#until) return;
    this.#until = until;
    for (const watcher of this.#watchers) watcher(until);
  }

  /** Calls `watcher` with each new limit; returns the call that stops it. */
  watch(watcher: (until: number) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }
}

/** The options of discover(). */
export type DiscoverOptions = Pick<ReadOptions, 'onBytes' | 'signal' | 'limits'>;
