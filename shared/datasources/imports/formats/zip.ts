/**
 * Safe reading of uploaded zips with yauzl: unsafe entry names, symlinks and zip bombs are
 * refused (declared sizes up front, inflated bytes while extracting); nested zips are not followed.
 */
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ImportInputError } from '#domain/import-sources.ts';
import { asInputError } from './errors.ts';
import type { ImportLimits } from './limits.ts';

/** An open zip and its (file) entries, checked against the limits. */
export interface OpenZip {
  zip: ZipFile;
  entries: Entry[];
  close(): void;
}

const UNSAFE_NAME = /^(invalid characters in fileName|absolute path|invalid relative path): (.*)$/s;

const zipLimits = (message: string) => new ImportInputError('zip_limits', message);

const isSymlink = (entry: Entry): boolean => ((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000;

const open = (path: string) =>
  new Promise<ZipFile>((resolve, reject) => {
    yauzl.open(
      path,
      {
        lazyEntries: true,
        autoClose: false,
        strictFileNames: true,
        validateEntrySizes: true,
      } as yauzl.Options,
      (error, zip) => (error || !zip ? reject(error) : resolve(zip)),
    );
  });

/** Maps yauzl's messages about entry names to 'unsafe_zip_entry' naming the entry. */
const zipError = (error: unknown): Error => {
  const message = error instanceof Error ? error.message : String(error);
  const unsafe = UNSAFE_NAME.exec(message);
  if (unsafe) {
    return new ImportInputError(
      'unsafe_zip_entry',
      `The zip entry "${unsafe[2]}" has an unsafe name (${unsafe[1]}); entries must be relative paths without "..", backslashes or drive letters.`,
    );
  }
  return asInputError(error, 'invalid_zip', 'The zip file cannot be read');
};

/**
 * Opens a zip and lists its file entries, refusing unsafe names, symlinks, more than
 * `maxZipEntries` entries, a declared total above `maxZipTotalBytes` and over-compressed entries.
 */
export async function openZip(path: string, limits: ImportLimits): Promise<OpenZip> {
  let zip: ZipFile;
  try {
    zip = await open(path);
  } catch (error) {
    throw zipError(error);
  }
  const close = () => {
    if (zip.isOpen) zip.close();
  };
  try {
    if (zip.entryCount > limits.maxZipEntries) {
      throw zipLimits(
        `The zip holds ${zip.entryCount} entries, more than the limit of ${limits.maxZipEntries}.`,
      );
    }
    const entries = await new Promise<Entry[]>((resolve, reject) => {
      const found: Entry[] = [];
      let total = 0;
      zip.on('error', reject);
      zip.on('end', () => resolve(found));
      zip.on('entry', (entry: Entry) => {
        try {
          if (isSymlink(entry)) {
            throw new ImportInputError(
              'unsafe_zip_entry',
              `The zip entry "${entry.fileName}" is a symbolic link; links are not accepted.`,
            );
          }
          if (!entry.fileName.endsWith('/')) {
            total += entry.uncompressedSize;
            checkSizes(entry.fileName, entry.uncompressedSize, entry.compressedSize, total, limits);
            found.push(entry);
          }
          zip.readEntry();
        } catch (error) {
          reject(error);
        }
      });
      zip.readEntry();
    });
    return { zip, entries, close };
  } catch (error) {
    close();
    throw zipError(error);
  }
}

/** Throws 'zip_limits' when an entry's sizes (declared or inflated) or the running total exceed the limits. */
const checkSizes = (name: string, size: number, compressed: number, total: number, limits: ImportLimits) => {
  if (total > limits.maxZipTotalBytes) {
    throw zipLimits(
      `The zip inflates to more than ${limits.maxZipTotalBytes} bytes (the limit), reached at entry "${name}".`,
    );
  }
  if (size > limits.ratioMinBytes && size > limits.maxCompressionRatio * Math.max(compressed, 1)) {
    throw zipLimits(
      `The zip entry "${name}" is compressed more than ${limits.maxCompressionRatio}:1 (${size} bytes from ${compressed}); it looks like a zip bomb.`,
    );
  }
};

/**
 * Extracts one entry to `target`, counting the bytes actually inflated against the declared size,
 * the ratio limit and the running total (`inflated` is the total before this entry); returns the new total.
 */
export async function extractEntry(
  zip: OpenZip,
  entry: Entry,
  target: string,
  limits: ImportLimits,
  inflated: number,
  signal?: AbortSignal,
): Promise<number> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      try {
        if (bytes > entry.uncompressedSize) {
          throw zipLimits(
            `The zip entry "${entry.fileName}" inflates to more bytes than its header declares (${entry.uncompressedSize}).`,
          );
        }
        checkSizes(entry.fileName, bytes, entry.compressedSize, inflated + bytes, limits);
        callback(null, chunk);
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  try {
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
      zip.zip.openReadStream(entry, (error, s) => (error || !s ? reject(error) : resolve(s))),
    );
    await pipeline(stream, counter, createWriteStream(target), { signal });
  } catch (error) {
    if (error instanceof Error && /too many bytes|too few bytes|expected/.test(error.message)) {
      throw zipLimits(
        `The zip entry "${entry.fileName}" does not inflate to its declared size: ${error.message}`,
      );
    }
    throw asInputError(error, 'invalid_zip', `The zip entry "${entry.fileName}" cannot be extracted`);
  }
  return inflated + bytes;
}
