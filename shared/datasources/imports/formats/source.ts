/** Reading a local file as a stream of chunks, naming layers after the upload, and the scratch dir. */
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import type { SourceFeature } from '#domain/import-sources.ts';
import { READ_CHUNK_BYTES } from './limits.ts';

const LF = 0x0a;

let scratch: string | undefined;

/**
 * Where readers put their temp files (an extracted shapefile, a GeoPackage's lock): the dir the
 * reader's thread was given (removed by its owner whatever happens to the thread), else os.tmpdir().
 */
export const scratchDir = (): string => scratch ?? tmpdir();

/** Sets the scratch dir of this thread's readers (the reader worker, per job; ADR 0107). */
export const useScratchDir = (dir: string | undefined): void => {
  scratch = dir;
};

/** The first chunk read goes on in pieces of this many bytes, then twice as many, and so on. */
const FIRST_PIECE_BYTES = 64 * 1024;

/**
 * The file's chunks in order from `start` (default 0), reporting the file position reached after
 * each. The first chunk read (READ_CHUNK_BYTES) is passed on in growing pieces (64 KiB, 128 KiB, …):
 * a reader parses what it is given whole, so its first features come out after a few hundred are
 * parsed, not a chunk's thousands — a load's run waits for them before its first write (ADR 0143).
 */
export async function* readChunks(
  path: string,
  options: { onBytes?: (bytes: number) => void; signal?: AbortSignal; start?: number } = {},
): AsyncGenerator<Buffer> {
  const start = options.start ?? 0;
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK_BYTES, signal: options.signal, start });
  let bytes = start;
  let piece = FIRST_PIECE_BYTES;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let rest = chunk;
      for (; piece < READ_CHUNK_BYTES && rest.length > piece; piece *= 2) {
        bytes += piece;
        yield rest.subarray(0, piece);
        options.onBytes?.(bytes);
        rest = rest.subarray(piece);
      }
      piece = READ_CHUNK_BYTES;
      bytes += rest.length;
      yield rest;
      options.onBytes?.(bytes);
    }
  } finally {
    stream.destroy();
  }
}

/**
 * The line breaks (LF) before a position of the file, counted on from the last position asked
 * (positions only grow) over the chunks read and not yet passed: the file's lines, as an editor
 * shows them (CSV's rows are numbered by it: csv-parse's own count takes a CR LF inside a quoted
 * cell for two lines), the same whether a read starts at the top or resumes (ADR 0143).
 */
export class LineCount {
  readonly #chunks: { start: number; bytes: Buffer }[] = [];
  #position: number;
  #lines: number;

  constructor(position: number, lines: number) {
    this.#position = position;
    this.#lines = lines;
  }

  /** A chunk read, starting at file position `start` (chunks come in file order). */
  add(start: number, bytes: Buffer): void {
    this.#chunks.push({ start, bytes });
  }

  /** The LFs before `position` (at least the last position asked). */
  before(position: number): number {
    for (let chunk = this.#chunks[0]; chunk && this.#position < position; chunk = this.#chunks[0]) {
      const chunkEnd = chunk.start + chunk.bytes.length;
      const upto = Math.min(position, chunkEnd) - chunk.start;
      const { bytes } = chunk;
      for (
        let i = bytes.indexOf(LF, this.#position - chunk.start);
        i !== -1 && i < upto;
        i = bytes.indexOf(LF, i + 1)
      )
        this.#lines++;
      this.#position = chunk.start + upto;
      if (this.#position >= chunkEnd) this.#chunks.shift();
    }
    return this.#lines;
  }
}

/**
 * The lines before file offset `offset` (LFs counted, nothing parsed): the line numbers of a read
 * that resumes there by position when its checkpoint has no line count (ADR 0143).
 */
export async function linesBefore(path: string, offset: number, signal?: AbortSignal): Promise<number> {
  const count = new LineCount(0, 0);
  let position = 0;
  for await (const chunk of readChunks(path, signal ? { signal } : {})) {
    count.add(position, chunk);
    position += chunk.length;
    if (position >= offset) break;
  }
  return count.before(offset);
}

/** The layer name of a single-layer file: the upload's base name without its extension. */
export const layerNameOf = (filename: string): string => {
  const base = basename(filename.replaceAll('\\', '/'));
  const dot = base.lastIndexOf('.');
  const name = dot > 0 ? base.slice(0, dot) : base;
  return name || 'layer';
};

/**
 * Features made at once by {@link featureBatch}: the consumer takes them before more are made, so
 * what is alive at once is this many, not a chunk's thousands (which every young-generation
 * collection of the reader copied; ADR 0143).
 */
export const FEATURES_AT_ONCE = 256;

/**
 * The features `read` makes of `items` (undefined: none for that item), in batches of at most
 * {@link FEATURES_AT_ONCE}, each made as it is taken; when `read` throws, the features before it
 * come first, then the error, as they would one at a time.
 */
export function* featureBatch<T>(
  items: Iterable<T>,
  read: (item: T) => SourceFeature | undefined,
): Generator<SourceFeature[]> {
  let features: SourceFeature[] = [];
  for (const item of items) {
    let feature: SourceFeature | undefined;
    try {
      feature = read(item);
    } catch (error) {
      if (features.length > 0) yield features;
      throw error;
    }
    if (!feature) continue;
    features.push(feature);
    if (features.length === FEATURES_AT_ONCE) {
      yield features;
      features = [];
    }
  }
  if (features.length > 0) yield features;
}
