/**
 * The import format readers (ADR 0084): sniff a file's format from its bytes, discover its layers
 * in one streaming pass, and stream one layer's features. Memory stays flat whatever the file size;
 * anything wrong with the file surfaces as an ImportInputError naming what to fix. Every call runs
 * in a worker thread (ADR 0107), so no file, however hostile, holds up the caller's event loop: a
 * reader stuck in one step, too slow or too greedy is stopped as 'file_too_complex'.
 */
import type { Discovery, ImportFormat, SourceFeature } from '#domain/import-sources.ts';
import type { RowBatch, RowShape } from '../staged-rows.ts';
import type { FromReader } from './reader-protocol.ts';
import { jobValue, runJob } from './reader-thread.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

export {
  DEFAULT_LIMITS,
  type ImportLimits,
  MAX_COMPRESSION_RATIO,
  MAX_DISCOVERY_MS,
  MAX_FEATURE_BYTES,
  MAX_FIELDS,
  MAX_STEP_MS,
  MAX_ZIP_ENTRIES,
  MAX_ZIP_TOTAL_BYTES,
  RATIO_MIN_BYTES,
  READER_HEAP_MB,
} from './limits.ts';
export type { DiscoverOptions, ReadOptions } from './types.ts';

/** Sniffs the type from the bytes (the name is only a hint); throws ImportInputError('unsupported_format' | 'empty_file', …). */
export async function sniffFormat(path: string, filename: string): Promise<ImportFormat> {
  return (await jobValue({ op: 'sniff', path, filename })) as ImportFormat;
}

/** One full streaming pass: layers, fields with inferred types, geometry type, SRID, feature count, bbox; warnings. */
export async function discover(
  path: string,
  filename: string,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  return (await jobValue(
    { op: 'discover', path, filename, ...(options.limits ? { limits: options.limits } : {}) },
    options,
  )) as Discovery;
}

/** The read job of `options` for one layer (its shape: answer staged rows). */
function readJob(path: string, filename: string, layer: string, options: ReadOptions, shape?: RowShape) {
  return {
    op: 'read' as const,
    path,
    filename,
    layer,
    ...(options.skip !== undefined ? { skip: options.skip } : {}),
    ...(options.offset !== undefined ? { offset: options.offset } : {}),
    ...(options.lines !== undefined ? { lines: options.lines } : {}),
    ...(options.csv ? { csv: options.csv } : {}),
    ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(shape ? { shape } : {}),
  };
}

/** A read job's batches of one kind, reporting the file position each reached. */
async function* batchesOf<K extends 'features' | 'rows'>(
  job: ReturnType<typeof readJob>,
  options: ReadOptions,
  kind: K,
): AsyncGenerator<Extract<FromReader, { type: K }>> {
  for await (const answer of runJob(job, options)) {
    if (answer.type === 'error') continue;
    if (answer.bytes !== undefined) options.onBytes?.(answer.bytes);
    if (answer.type !== kind) continue;
    options.signal?.throwIfAborted();
    yield answer as Extract<FromReader, { type: K }>;
  }
}

/** The features of one layer in file order (the same order every call, so `skip` resumes exactly). */
export async function* readFeatures(
  path: string,
  filename: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature> {
  for await (const batch of batchesOf(readJob(path, filename, layer, options), options, 'features')) {
    for (const feature of batch.features) {
      options.signal?.throwIfAborted();
      yield feature;
    }
  }
}

/**
 * The features of one layer in file order as staged rows of `shape`, built in the reader's thread
 * (staged-rows.ts): what the loader reads. A geometry that can't be staged ends the batches, the
 * last one naming it.
 */
export async function* readRows(
  path: string,
  filename: string,
  layer: string,
  shape: RowShape,
  options: ReadOptions = {},
): AsyncGenerator<RowBatch> {
  for await (const batch of batchesOf(readJob(path, filename, layer, options, shape), options, 'rows'))
    yield batch.rows;
}
