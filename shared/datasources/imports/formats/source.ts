/** Reading a local file as a stream of chunks, naming layers after the upload, and the scratch dir. */
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import { READ_CHUNK_BYTES } from './limits.ts';

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

/** The file's chunks in order from `start` (default 0), reporting the file position reached after each. */
export async function* readChunks(
  path: string,
  options: { onBytes?: (bytes: number) => void; signal?: AbortSignal; start?: number } = {},
): AsyncGenerator<Buffer> {
  const start = options.start ?? 0;
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK_BYTES, signal: options.signal, start });
  let bytes = start;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      yield chunk;
      options.onBytes?.(bytes);
    }
  } finally {
    stream.destroy();
  }
}

/**
 * The lines before file offset `offset` (LFs counted with Buffer.indexOf, nothing parsed): the
 * line numbers of a read that resumes there by position (ADR 0143).
 */
export async function linesBefore(path: string, offset: number, signal?: AbortSignal): Promise<number> {
  let lines = 0;
  let position = 0;
  for await (const chunk of readChunks(path, signal ? { signal } : {})) {
    const upto = Math.min(chunk.length, offset - position);
    for (let i = chunk.indexOf(0x0a); i !== -1 && i < upto; i = chunk.indexOf(0x0a, i + 1)) lines++;
    position += chunk.length;
    if (position >= offset) break;
  }
  return lines;
}

/** The layer name of a single-layer file: the upload's base name without its extension. */
export const layerNameOf = (filename: string): string => {
  const base = basename(filename.replaceAll('\\', '/'));
  const dot = base.lastIndexOf('.');
  const name = dot > 0 ? base.slice(0, dot) : base;
  return name || 'layer';
};
