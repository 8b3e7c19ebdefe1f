/**
 * Loads an import's plan into its staging schema (ADR 0085): layer after layer in plan order, each
 * resumed from its checkpoint, chunk after chunk, every chunk one transaction that writes its rows
 * and advances the checkpoint, so a crash at any moment neither duplicates nor loses rows. Holds at
 * most one chunk in memory.
 */
import type {
  CsvGeometry,
  Discovery,
  ImportPlan,
  LayerPlan,
  SourceFeature,
  SourceLayer,
} from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import type { ImportDatabase } from './database.ts';
import type { Checkpoint } from './database-checkpoints.ts';
import type { ImportSession } from './database-session.ts';
import { type ChunkRows, type LayerTable, layerTable, rowShape } from './database-staging.ts';
import { ReadLimit } from './formats/types.ts';
import {
  appendRows,
  type BatchBounds,
  emptyBatch,
  oneByOne,
  type RowBatch,
  type RowShape,
  rowBatches,
} from './staged-rows.ts';

/** How a layer is read from its source. */
export interface ReadFrom {
  /** Features to pass over first: the read begins with the `skip`+1-th. */
  skip: number;
  /** Where feature `skip` begins in the file, when a reader said so (see SourceFeature.end). */
  offset?: number;
  /** With `offset`: the lines before it, when the reader numbered them (see SourceFeature.lines). */
  lines?: number;
  /** How many bytes of the source have been read so far (a position, not an increment). */
  onBytes: (bytes: number) => void;
  csv?: CsvGeometry;
  encoding?: string;
  /** How far the pipeline will read (ADR 0150): a source that reads ahead goes no further. */
  limit?: ReadLimit;
}

/**
 * What the pipeline reads: a layer's features from the `skip`+1-th on, in file order, as staged
 * rows of `shape` (the format reader's thread builds them, staged-rows.ts).
 */
export interface RowSource {
  rows(layer: string, options: ReadFrom & { shape: RowShape }): AsyncIterable<RowBatch>;
}

/** A source of features, read in this thread (tests, and readers not behind the worker). */
export interface FeatureSource {
  features(layer: string, options: ReadFrom): AsyncIterable<SourceFeature>;
}

/** A row a batch: a source read in this thread reads no further than the rows taken. */
const ROW_BY_ROW: BatchBounds = {
  features: 1,
  bytes: Number.POSITIVE_INFINITY,
  ms: Number.POSITIVE_INFINITY,
};

/** The features of `source` as row batches, built in this thread (a row a batch unless `bounds` say). */
export function featureRows(source: FeatureSource, bounds: BatchBounds = ROW_BY_ROW): RowSource {
  return {
    rows(layer, { shape, ...options }) {
      let position = 0;
      const features = source.features(layer, {
        ...options,
        onBytes: (bytes) => {
          position = bytes;
          options.onBytes(bytes);
        },
      });
      return rowBatches(oneByOne(features), shape, options.skip + 1, () => position, bounds);
    },
  };
}

export interface LoadProgress {
  processed_features: number;
  processed_bytes: number;
  processed_layers: number;
  warnings: string[];
}

/** A chunk ends at this many features… */
export const CHUNK_FEATURES = 5_000;
/** …or at about this many bytes of row text, whichever comes first. */
export const CHUNK_BYTES = 8 * 1024 * 1024;
/**
 * A run's first chunk holds at most this many features: nothing is being written while it is read,
 * so a short one gets the write of the run going sooner (the next, full chunk is read beside it).
 */
export const FIRST_CHUNK_FEATURES = 500;

/**
 * Loads the plan's enabled layers (in plan order) into staging, resuming each from its checkpoint:
 * chunk after chunk, each chunk one transaction that writes its rows AND advances the checkpoint,
 * until done, out of `budgetMs`, or `shouldStop()` says stop (checked before a chunk is read, with
 * time for its read and its write; a chunk read is always written, and a run always makes at least
 * one step). Finalises each layer when its features are all loaded. Warnings cover
 * every layer loaded so far (values that didn't fit, invalid or repaired geometries).
 *
 * `shouldStop` is asked with the import's features read so far, and once more before each chunk
 * with those read once the chunk is: "will you stop after this one?" When the budget or
 * `shouldStop` says the chunk will be the run's last, the source is told to read no further than
 * it (ReadLimit, ADR 0150), so a run's end reads nothing it doesn't write.
 *
 * It never stages more than discovery found (ADR 0110): the import reserved the features discovery
 * counted per layer and the file's size against its limits and its workspace's quota, so a layer
 * reaching past its count, or a read past the file's size (the file changed since), stops the
 * load with ImportInputError 'import_source_changed' before the chunk that would cross is written.
 */
export async function loadImport(args: {
  db: ImportDatabase;
  importId: string;
  plan: ImportPlan;
  discovery: Discovery;
  source: RowSource;
  budgetMs: number;
  /** True when the load should stop once `read.features` of the import's features are read. */
  shouldStop?: (read: { features: number }) => Promise<boolean>;
  onProgress?: (p: LoadProgress) => Promise<void> | void;
  /** Features per chunk (tests); default CHUNK_FEATURES. */
  chunkFeatures?: number;
  /** The workflow run loading: a run older than the import's fence stops (ADR 0085). */
  run?: number;
}): Promise<LoadProgress & { done: boolean }> {
  const started = Date.now();
  const chunkFeatures = Math.max(1, args.chunkFeatures ?? CHUNK_FEATURES);
  const layers = enabledLayers(args.plan, args.discovery);
  return args.db.session(async (session) => {
    const states = new Map<string, Checkpoint>();
    for (const { table } of layers)
      states.set(table.table, await session.checkpoint(args.importId, table.table));
    const progress = (): LoadProgress => summarise(layers, states);
    let steps = 0;
    let slowestStepMs = 0;
    let slowestReadMs = 0;
    /** True when `aheadMs` more would pass the budget, or `shouldStop` says stop at `features` read. */
    const mustStop = async (aheadMs: number, features: number) =>
      Date.now() - started + aheadMs > args.budgetMs || (await args.shouldStop?.({ features })) === true;
    /** True when the run should end before its next step (the first step always runs). */
    const outOfTime = async () => steps > 0 && (await mustStop(slowestStepMs, progress().processed_features));
    /**
     * True when the run should end before reading another chunk, while one is being written (the
     * run's step, so it never ends without one): reading it and writing it must fit the budget too,
     * judged by the slowest read and step so far. A chunk once read is always written, so a run
     * never drops what it read (ADR 0143).
     */
    const noTimeToRead = (features: number) => mustStop(slowestReadMs + slowestStepMs, features);
    /**
     * True when the chunk about to be read will be the run's last: once it is read (no longer than
     * the slowest read so far), there will be no time to read another, or `shouldStop` will say
     * stop. The source then reads no further than it (ADR 0150).
     */
    const lastChunk = (features: number) => mustStop(2 * slowestReadMs + slowestStepMs, features);
    const step = async <T>(work: () => Promise<T>): Promise<T> => {
      const begun = Date.now();
      const result = await work();
      steps += 1;
      slowestStepMs = Math.max(slowestStepMs, Date.now() - begun);
      return result;
    };

    for (const { plan, source, table } of layers) {
      const known = states.get(table.table) as Checkpoint;
      if (known.finalized) continue;
      if (await outOfTime()) return { ...progress(), done: false };
      const cap = { features: source.feature_count, bytes: args.discovery.size_bytes };
      // The import's features read: the other layers' and this one's (what the layer counts).
      const others = progress().processed_features - known.features;
      const layer = await loadLayer(session, args, table, plan, known, chunkFeatures, cap, {
        prepare: async () => {
          const prepared = await session.prepareLayer(args.importId, table, args.run);
          states.set(table.table, prepared);
          if (!prepared.finalized) await session.readyForRows(table);
          return prepared;
        },
        noTimeToRead: (read) => noTimeToRead(others + read),
        lastChunk: (read) => lastChunk(others + read),
        read: (ms) => {
          slowestReadMs = Math.max(slowestReadMs, ms);
        },
        step,
        onChunk: async (next) => {
          states.set(table.table, next);
          await args.onProgress?.(progress());
        },
      });
      // Published meanwhile (another run): nothing to load or finalize.
      if (layer === 'published') continue;
      if (layer === 'stopped') return { ...progress(), done: false };
      if (await outOfTime()) return { ...progress(), done: false };
      const result = await step(() => session.finalizeLayer(args.importId, plan, source));
      states.set(table.table, { ...(states.get(table.table) as Checkpoint), finalized: true, result });
      await args.onProgress?.(progress());
    }
    return { ...progress(), done: true };
  });
}

interface PlannedLayer {
  plan: LayerPlan;
  source: SourceLayer;
  table: LayerTable;
}

/** The enabled layers with their source layer and table; refuses unknown layers and table name clashes. */
function enabledLayers(plan: ImportPlan, discovery: Discovery): PlannedLayer[] {
  const out: PlannedLayer[] = [];
  const tables = new Map<string, string>();
  for (const layer of plan.layers) {
    if (!layer.enabled) continue;
    const source = discovery.layers.find((l) => l.name === layer.source_layer);
    if (!source) {
      throw new ImportInputError(
        'invalid_plan',
        `layer ${layer.public_id}: the file has no layer named '${layer.source_layer}'.`,
      );
    }
    const table = layerTable(layer, source);
    const other = tables.get(table.table);
    if (other !== undefined) {
      throw new ImportInputError(
        'invalid_plan',
        `layers ${other} and ${layer.public_id} would both be stored as table ${table.table}; give them public ids that differ in more than case and punctuation.`,
      );
    }
    tables.set(table.table, layer.public_id);
    out.push({ plan: layer, source, table });
  }
  return out;
}

/** Whether two checkpoints name the same place in the source. */
const samePlace = (a: Checkpoint, b: Checkpoint) =>
  a.features === b.features && a.offset === b.offset && a.lines === b.lines;

/**
 * Prepares one layer and loads its remaining features: 'loaded' when the source is exhausted,
 * 'stopped' when the run ends first, 'published' when preparing found the layer published.
 *
 * The reader starts from `known` (the checkpoint read before) while the layer is prepared and the
 * connection readied for its rows (ADR 0143): the reader's first chunk and the database's work
 * overlap instead of taking turns. When preparing finds the checkpoint elsewhere (another run
 * moved it), that read is dropped and the layer is read from where the checkpoint is.
 */
async function loadLayer(
  session: ImportSession,
  args: { importId: string; source: RowSource },
  table: LayerTable,
  plan: LayerPlan,
  known: Checkpoint,
  chunkFeatures: number,
  cap: { features: number; bytes: number },
  run: {
    /** Prepares the layer and readies the connection for its rows; the layer's checkpoint. */
    prepare: () => Promise<Checkpoint>;
    /** Whether to stop before reading on, `read` of the layer's features read so far. */
    noTimeToRead: (read: number) => Promise<boolean>;
    /** Whether the chunk about to be read will be the run's last, `read` features once it is. */
    lastChunk: (read: number) => Promise<boolean>;
    /** How long reading (and casting) a chunk took. */
    read: (ms: number) => void;
    step: <T>(work: () => Promise<T>) => Promise<T>;
    onChunk: (next: Checkpoint) => Promise<void>;
  },
): Promise<'loaded' | 'stopped' | 'published'> {
  const readLimit = new ReadLimit();
  let bytes = known.bytes;
  const readFrom = (from: Checkpoint) =>
    args.source
      .rows(plan.source_layer, {
        limit: readLimit,
        shape: rowShape(table),
        skip: from.features,
        // Read on from where the last committed feature ended, not from the top (ADR 0143).
        ...(from.features > 0 && from.offset !== null
          ? { offset: from.offset, ...(from.lines !== null ? { lines: from.lines } : {}) }
          : {}),
        onBytes: (position) => {
          if (position > bytes) bytes = position;
        },
        ...(plan.csv ? { csv: plan.csv } : {}),
        ...(plan.encoding ? { encoding: plan.encoding } : {}),
      })
      [Symbol.asyncIterator]();
  /** The run's last chunk ends at feature `through`: the source reads no further than it. */
  const limitRead = async (through: number) =>
    readLimit.set((await run.lastChunk(through)) ? through : Number.POSITIVE_INFINITY);
  const firstLimit = Math.min(chunkFeatures, FIRST_CHUNK_FEATURES);

  await limitRead(known.features + firstLimit);
  let iterator = readFrom(known);
  let exhausted = false;
  /** The reader's first batch, asked for before the layer is prepared. */
  let ahead: Promise<IteratorResult<RowBatch>> | undefined = iterator.next();
  // Awaited below, or dropped with its read: not an unhandled rejection meanwhile.
  ahead.catch(() => undefined);
  /** Ends the read begun from `known`. */
  const dropRead = async () => {
    await ahead?.catch(() => undefined);
    ahead = undefined;
    await iterator.return?.();
  };
  let state: Checkpoint;
  try {
    state = await run.prepare();
  } catch (error) {
    await dropRead();
    throw error;
  }
  if (state.finalized) {
    await dropRead();
    return 'published';
  }
  if (!samePlace(state, known)) {
    await dropRead();
    bytes = state.bytes;
    await limitRead(state.features + firstLimit);
    iterator = readFrom(state);
  }
  bytes = Math.max(bytes, state.bytes);
  const start = state.features;
  // The batch being taken into chunks, and its next row.
  let batch: RowBatch = emptyBatch(table);
  let at = 0;
  // One chunk is written while the next is read (at most two in memory): the reader and
  // PostgreSQL work side by side instead of taking turns.
  let writing: Promise<Checkpoint> | undefined;
  let nextFid = state.features + 1;
  try {
    for (;;) {
      // Out of time before reading on: the chunk in flight is the run's last.
      if (writing && (await run.noTimeToRead(nextFid - 1))) {
        state = await writing;
        writing = undefined;
        return 'stopped';
      }
      const readStarted = Date.now();
      const chunk: ChunkRows = { ...emptyBatch(table), firstFid: nextFid };
      let textBytes = 0;
      const first = nextFid === start + 1;
      const limit = first ? firstLimit : chunkFeatures;
      // The run's last chunk: the source reads no further than it (feature indexes from 0: fid - 1).
      // The first chunk's was set before its read began.
      if (!first) await limitRead(nextFid - 1 + limit);
      while (chunk.count < limit && textBytes < CHUNK_BYTES) {
        if (at === batch.count) {
          if (batch.failure !== undefined) {
            // The feature that can't be staged: past what discovery found, the file changed.
            if (nextFid + chunk.count > cap.features) throw sourceChanged(table, cap, false);
            throw new ImportInputError('invalid_geometry', batch.failure);
          }
          const next = await (ahead ?? iterator.next());
          ahead = undefined;
          if (next.done) {
            exhausted = true;
            break;
          }
          batch = next.value;
          at = 0;
          continue;
        }
        // The rows of the batch that fit the chunk, each checked against what discovery found.
        let to = at;
        while (to < batch.count && chunk.count + (to - at) < limit && textBytes < CHUNK_BYTES) {
          const pastSize = cap.bytes > 0 && (batch.positions[to] as number) > cap.bytes;
          if (nextFid + chunk.count + (to - at) > cap.features || pastSize) {
            throw sourceChanged(table, cap, pastSize);
          }
          textBytes += batch.sizes[to] as number;
          to += 1;
        }
        appendRows(chunk, batch, at, to);
        at = to;
      }
      nextFid += chunk.count;
      run.read(Date.now() - readStarted);
      if (writing) {
        const previous = writing;
        writing = undefined;
        state = await previous;
      }
      if (chunk.count > 0) {
        const from = state;
        const position = bytes;
        writing = run
          .step(() => session.writeChunk(args.importId, table, from, chunk, position))
          .then(async (next) => {
            await run.onChunk(next);
            return next;
          });
      }
      if (exhausted) {
        if (writing) state = await writing;
        writing = undefined;
        return 'loaded';
      }
    }
  } finally {
    // A write still in flight when reading failed: wait for it (its error is the reader's to report).
    if (writing) await writing.catch(() => undefined);
    await ahead?.catch(() => undefined);
    if (!exhausted) await iterator.return?.();
  }
}

/** The failure of a load whose file holds more than discovery found in it (ADR 0110). */
function sourceChanged(
  table: LayerTable,
  cap: { features: number; bytes: number },
  pastSize: boolean,
): ImportInputError {
  const found = pastSize
    ? `the file is larger than the ${cap.bytes} bytes it had`
    : `layer ${table.label} holds more than the ${cap.features} features it had`;
  return new ImportInputError(
    'import_source_changed',
    `The load stopped: ${found} when the import read it, and the import reserved only that much of the workspace's quota. The file changed since; create a new import from it.`,
  );
}

/** Progress over every enabled layer, with the warnings their checkpoints hold. */
function summarise(layers: PlannedLayer[], states: Map<string, Checkpoint>): LoadProgress {
  const progress: LoadProgress = {
    processed_features: 0,
    processed_bytes: 0,
    processed_layers: 0,
    warnings: [],
  };
  for (const { table } of layers) {
    const state = states.get(table.table);
    if (!state) continue;
    progress.processed_features += state.features;
    progress.processed_bytes += state.bytes;
    if (state.finalized) progress.processed_layers += 1;
    for (const column of table.columns) {
      const n = state.misfits[column.name] ?? 0;
      if (n > 0) {
        progress.warnings.push(
          `layer ${table.label}: ${n} value${n === 1 ? '' : 's'} of field '${column.name}' didn't fit ${column.type} and ${n === 1 ? 'was' : 'were'} left empty`,
        );
      }
    }
    const result = state.result;
    if (result && result.invalid > 0) {
      const example = result.first_invalid
        ? ` (e.g. fid ${result.first_invalid.fid}: ${result.first_invalid.reason})`
        : '';
      progress.warnings.push(
        `layer ${table.label}: ${result.invalid} invalid geometr${result.invalid === 1 ? 'y' : 'ies'}${example}; set make_valid in the plan to repair them`,
      );
    }
    if (result && result.repaired > 0) {
      progress.warnings.push(
        `layer ${table.label}: ${result.repaired} invalid geometr${result.repaired === 1 ? 'y was' : 'ies were'} repaired (make_valid)`,
      );
    }
  }
  return progress;
}
