/**
 * The format readers' worker thread (ADR 0107): runs one job of direct.ts at a time and streams
 * its features back in batches, at most CREDITS batches ahead of the consumer. Heartbeats (an
 * interval, the reader's progress, each batch) tell the client it is not stuck in one
 * synchronous step; the client terminates it when it is.
 *
 * A batch is bounded in features, in estimated bytes and in the time spent filling it, so taking
 * one in costs the client's event loop little. A GeoJSON geometry over WKB_FROM_BYTES crosses as
 * WKB instead (the form the loader writes anyway): structured clone rebuilds a nested coordinate
 * array on the receiving thread at 1-3 µs per position, and WKB that large is transferred, not
 * copied.
 */
import { type MessagePort, parentPort } from 'node:worker_threads';
import type { SourceFeature, SourceGeometry } from '#domain/import-sources.ts';
import { geometryText } from '../geometry-text.ts';
import { type BatchBounds, type RowBatch, rowBatches } from '../staged-rows.ts';
import { discover, discoverPart, readFeatureBatches, readFeatures, sniffFormat } from './direct.ts';
import { CREDITS, type FromReader, type ReaderJob, type ToReader, toWire } from './reader-protocol.ts';
import { useScratchDir } from './source.ts';
import type { ReadOptions } from './types.ts';

/** Features of one batch at most… */
const BATCH_FEATURES = 500;
/** …estimated bytes at most… */
const BATCH_BYTES = 1024 ** 2;
/** …and time spent filling it at most (ms). */
const BATCH_MS = 20;
/** The bounds of a batch of staged rows (the same as a batch of features). */
const ROW_BOUNDS: BatchBounds = { features: BATCH_FEATURES, bytes: BATCH_BYTES, ms: BATCH_MS };
/** A GeoJSON geometry at least this large (estimated) crosses as WKB. */
const WKB_FROM_BYTES = 64 * 1024;
/** How often an idle or waiting worker says it is alive (ms). */
const HEARTBEAT_MS = 250;

if (!parentPort) throw new Error('reader-worker.ts runs in a worker thread');
const port: MessagePort = parentPort;

const post = (message: FromReader) => port.postMessage(message);

/** The job running: its id, the batches it may still send, and how to wake it. */
interface Running {
  id: number;
  credits: number;
  stopped: boolean;
  /** Staged rows: how far the consumer will read (features from the layer's first, ReadLimit). */
  until: number;
  wake?: () => void;
}
let running: Running | undefined;

/**
 * About how many bytes `value` holds (strings by length, numbers 8, nesting walked with an explicit
 * stack); stops counting at `budget`.
 */
function sizeOf(value: unknown, budget: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size < budget) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (v instanceof Uint8Array) size += v.byteLength;
    else if (Array.isArray(v)) {
      size += 8;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      for (const key in v) {
        size += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    } else size += 8;
  }
  return size;
}

/** The geometry as WKB bytes when it is a large GeoJSON object the loader can write; else as it is. */
function transportable(geometry: SourceGeometry | null): { geometry: SourceGeometry | null; bytes: number } {
  if (geometry === null) return { geometry, bytes: 0 };
  if ('wkb' in geometry) return { geometry, bytes: geometry.wkb.byteLength };
  if ('wkt' in geometry) return { geometry, bytes: String(geometry.wkt).length };
  const bytes = sizeOf(geometry, WKB_FROM_BYTES);
  if (bytes < WKB_FROM_BYTES) return { geometry, bytes };
  try {
    // The loader's own conversion (geometry-text.ts), so the bytes it writes are the same.
    const wkb = Buffer.from(geometryText(geometry), 'hex');
    return { geometry: { wkb }, bytes: wkb.byteLength };
  } catch {
    // A shape the loader refuses: it crosses as it is, and the loader reports it as before.
    return { geometry, bytes: sizeOf(geometry, Number.POSITIVE_INFINITY) };
  }
}

/** Waits until `ready()` holds or the job is stopped (each client message wakes it); false when stopped. */
async function waitFor(job: Running, ready: () => boolean): Promise<boolean> {
  while (!ready() && !job.stopped) {
    await new Promise<void>((resolve) => {
      job.wake = resolve;
    });
  }
  return !job.stopped;
}

/** Waits until the client grants a batch (or stops the job); false when stopped. */
const credit = (job: Running): Promise<boolean> => waitFor(job, () => job.credits > 0);

/**
 * Posts a batch once the client grants one (taking the grant), made when it goes (so its file
 * position is the one reached then); false when the job was stopped.
 */
async function send(job: Running, batch: () => FromReader, transfer: ArrayBuffer[] = []): Promise<boolean> {
  if (!(await credit(job))) return false;
  job.credits--;
  port.postMessage(batch(), transfer);
  return true;
}

/** Streams the features in batches, as the client grants them, until they end or the job is stopped. */
async function stream(
  job: Running,
  features: AsyncGenerator<SourceFeature>,
  position: () => number | undefined,
): Promise<void> {
  let batch: SourceFeature[] = [];
  let transfer = new Set<ArrayBuffer>();
  let bytes = 0;
  let started = performance.now();
  const flush = async (): Promise<boolean> => {
    const sent = () => ({ type: 'features', id: job.id, features: batch, bytes: position() }) as const;
    if (!(await send(job, sent, [...transfer]))) return false;
    batch = [];
    transfer = new Set();
    bytes = 0;
    started = performance.now();
    return true;
  };
  // Leaving the loop early (stopped) returns the reader, so its own cleanup runs.
  for await (const feature of features) {
    if (job.stopped) return;
    const { geometry, bytes: geometryBytes } = transportable(feature.geometry);
    batch.push(geometry === feature.geometry ? feature : { ...feature, geometry });
    // Large WKB moves instead of being copied: a fresh copy on the client costs it page faults
    // (65 ms for 16 MB measured); a buffer that large is never a slice of Node's shared pool.
    if (geometry && 'wkb' in geometry && geometry.wkb.buffer.byteLength >= WKB_FROM_BYTES) {
      transfer.add(geometry.wkb.buffer as ArrayBuffer);
    }
    bytes += geometryBytes + sizeOf(feature.properties, BATCH_BYTES);
    if (batch.length >= BATCH_FEATURES || bytes >= BATCH_BYTES || performance.now() - started >= BATCH_MS) {
      if (!(await flush())) return;
    }
  }
  if (batch.length > 0) await flush();
}

/** Waits while feature `next` lies past how far the consumer will read (ADR 0150); false when stopped. */
const wanted = (job: Running, next: number): Promise<boolean> => waitFor(job, () => next < job.until);

/**
 * Streams the features as staged rows (staged-rows.ts), in batches as the client grants them and
 * as far as its consumer will read, until they end, one can't be staged (the last batch says which),
 * or the job is stopped. `first` is the first feature's place in the layer (the read's `skip`).
 */
async function streamRows(
  job: Running,
  batches: AsyncGenerator<RowBatch>,
  position: () => number | undefined,
  first: number,
): Promise<void> {
  let next = first;
  // Leaving the loop early (stopped) returns the generator, and with it the reader. The limit is
  // asked after each batch, before the generator reads the next one from the file.
  for await (const rows of batches) {
    if (!(await send(job, () => ({ type: 'rows', id: job.id, rows, bytes: position() })))) return;
    if (rows.failure !== undefined) return;
    next += rows.count;
    if (!(await wanted(job, next))) return;
  }
}

/** Runs one job to its end, answering 'done' or 'error' (also after 'stop'). */
async function run(id: number, job: ReaderJob, scratch: string): Promise<void> {
  const until = job.op === 'read' ? (job.until ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
  const state: Running = { id, credits: CREDITS, stopped: false, until };
  running = state;
  useScratchDir(scratch);
  const alive = setInterval(() => post({ type: 'alive', id }), HEARTBEAT_MS);
  let bytes: number | undefined;
  const onBytes = (position: number) => {
    bytes = position;
    post({ type: 'bytes', id, bytes: position });
  };
  try {
    switch (job.op) {
      case 'sniff':
        post({ type: 'done', id, value: await sniffFormat(job.path, job.filename) });
        return;
      case 'discover': {
        const options = { onBytes, ...(job.limits ? { limits: job.limits } : {}) };
        post({
          type: 'done',
          id,
          value: job.part
            ? await discoverPart(job.path, job.filename, job.part, options)
            : await discover(job.path, job.filename, options),
        });
        return;
      }
      case 'read': {
        const options: ReadOptions = {
          onBytes,
          ...(job.skip !== undefined ? { skip: job.skip } : {}),
          ...(job.offset !== undefined ? { offset: job.offset } : {}),
          ...(job.lines !== undefined ? { lines: job.lines } : {}),
          ...(job.csv ? { csv: job.csv } : {}),
          ...(job.encoding !== undefined ? { encoding: job.encoding } : {}),
          ...(job.limits ? { limits: job.limits } : {}),
          // Rows are written here (staged-rows.ts): their geometries never cross as arrays.
          ...(job.shape ? { packCoordinates: true } : {}),
        };
        if (job.shape) {
          const features = readFeatureBatches(job.path, job.filename, job.layer, options);
          const rows = rowBatches(features, job.shape, (job.skip ?? 0) + 1, () => bytes ?? 0, ROW_BOUNDS);
          await streamRows(state, rows, () => bytes, job.skip ?? 0);
        } else await stream(state, readFeatures(job.path, job.filename, job.layer, options), () => bytes);
        post({ type: 'done', id, ...(bytes !== undefined ? { bytes } : {}) });
        return;
      }
    }
  } catch (error) {
    post({ type: 'error', id, error: toWire(error) });
  } finally {
    clearInterval(alive);
    useScratchDir(undefined);
    running = undefined;
  }
}

port.on('message', (message: ToReader) => {
  switch (message.type) {
    case 'job':
      void run(message.id, message.job, message.scratch);
      return;
    case 'more':
    case 'until':
    case 'stop': {
      const job = running;
      if (job?.id !== message.id) return;
      if (message.type === 'more') job.credits++;
      else if (message.type === 'until') job.until = message.until;
      else job.stopped = true;
      const wake = job.wake;
      job.wake = undefined;
      wake?.();
      return;
    }
  }
});
post({ type: 'ready' });
