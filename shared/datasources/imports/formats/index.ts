/**
 * The import format readers (ADR 0084): sniff a file's format from its bytes, discover its layers
 * in one streaming pass, and stream one layer's features. Memory stays flat whatever the file size;
 * anything wrong with the file surfaces as an ImportInputError naming what to fix. Every call runs
 * in a worker thread (ADR 0107), so no file, however hostile, holds up the caller's event loop: a
 * reader stuck in one step, too slow or too greedy is stopped as 'file_too_complex'.
 */
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Discovery, ImportFormat, SourceFeature } from '#domain/import-sources.ts';
import type { RowBatch, RowShape } from '../staged-rows.ts';
import {
  type DiscoveryPart,
  discoveryOfParts,
  SMALLEST_SPLIT,
  SPLIT_FROM_BYTES,
  splitCandidate,
  splits,
} from './discovery-parts.ts';
import { limitsOf } from './limits.ts';
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

/**
 * One full streaming pass: layers, fields with inferred types, geometry type, SRID, feature count,
 * bbox; warnings. A large GeoJSON, GeoJSONSeq or CSV file is read in two parts side by side (ADR
 * 0156) where the machine has a second CPU; the answer is the same.
 */
export async function discover(
  path: string,
  filename: string,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const at = await discoverySplit(path, filename, options);
  return at === undefined
    ? discoverInOrder(path, filename, options)
    : discoverInParts(path, filename, at, options);
}

/** The discovery job: the file read from the top in one thread. */
async function discoverInOrder(path: string, filename: string, options: DiscoverOptions): Promise<Discovery> {
  return (await jobValue(
    { op: 'discover', path, filename, ...(options.limits ? { limits: options.limits } : {}) },
    options,
  )) as Discovery;
}

/** Where to split the discovery of the file (ADR 0156); undefined: read it in one part. */
export async function discoverySplit(
  path: string,
  filename: string,
  options: DiscoverOptions = {},
): Promise<number | undefined> {
  if (availableParallelism() < 2) return undefined;
  const { size } = await stat(path);
  if (size < SMALLEST_SPLIT) return undefined;
  options.signal?.throwIfAborted();
  const format = await sniffFormat(path, filename);
  if (!splits(format) || size < SPLIT_FROM_BYTES[format]) return undefined;
  return splitCandidate(path, size, format);
}

/**
 * The discovery of a file in two parts side by side (ADR 0156, `discoveryOfParts`): the head from
 * the top to the feature ending at `at`, the tail from there in a thread of its own (half the
 * heap: the two together stay within one reader's limit and a half; the thread ends with the
 * job). Progress is the two parts' bytes together, never going back.
 */
export async function discoverInParts(
  path: string,
  filename: string,
  at: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const limits = limitsOf(options.limits);
  const { size } = await stat(path);
  let told = 0;
  const tell = (bytes: number) => {
    if (bytes <= told) return;
    told = bytes;
    options.onBytes?.(bytes);
  };
  let headBytes = 0;
  let tailBytes = 0;
  const stopTail = new AbortController();
  const tailLimits = { ...options.limits, readerHeapMb: Math.ceil(limits.readerHeapMb / 2) };
  const tail = jobValue(
    { op: 'discover', path, filename, limits: tailLimits, part: { from: at } },
    {
      limits: tailLimits,
      park: false,
      signal: options.signal ? AbortSignal.any([options.signal, stopTail.signal]) : stopTail.signal,
      onBytes: (bytes) => {
        tailBytes = bytes - at;
        tell(headBytes + tailBytes);
      },
    },
  ) as Promise<DiscoveryPart>;
  const head = jobValue(
    {
      op: 'discover',
      path,
      filename,
      ...(options.limits ? { limits: options.limits } : {}),
      part: { to: at },
    },
    {
      ...options,
      onBytes: (bytes) => {
        headBytes = Math.min(bytes, at);
        tell(headBytes + tailBytes);
      },
    },
  ) as Promise<DiscoveryPart>;
  const inOrder = () => {
    options.signal?.throwIfAborted();
    return discoverInOrder(path, filename, { ...options, onBytes: tell });
  };
  const { discovery, merged } = await discoveryOfParts(
    { head, tail, stopTail: () => stopTail.abort(), inOrder },
    filename,
    size,
    limits.maxFields,
  );
  // The head stopped mid-chunk, before it said how far it read.
  if (merged) tell(size);
  return discovery;
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
