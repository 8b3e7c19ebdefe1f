import { createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { errorFields, logger } from '#log/logger.ts';
import {
  LOCAL_INCOMING_DIR,
  localIncomingPath,
  localUploadPath,
  verifyLocalUpload,
} from '#platform/import-uploads.ts';

/** Where the local host takes import uploads (the stand-in for S3's presigned POST). */
export const LOCAL_UPLOAD_PATH = '/local-uploads';

/**
 * Days an upload is kept: the default of `importUploadExpiryDays`, the upload bucket's lifecycle
 * rule on AWS (infra/constructs/stage-config.ts; a unit test keeps the two equal; ADR 0106).
 */
export const LOCAL_UPLOAD_EXPIRY_DAYS = 7;

/** Days a transfer that never completed is kept: the bucket's rule for incomplete multipart uploads. */
export const LOCAL_INCOMPLETE_EXPIRY_DAYS = 1;

/** How often the host looks for expired uploads (and once at start). */
const EXPIRY_INTERVAL_MS = 3600_000;

/** The store's directories and files are its owner's only (ADR 0106). */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

const DAY_MS = 24 * 3600_000;

/** S3 answers refused POSTs with an XML error; so does this stand-in (plain text suffices for clients). */
function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent || res.destroyed) return;
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, {
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const malformed = () =>
  new Refusal(
    400,
    'MalformedPOSTRequest',
    'The body of your POST request is not well-formed multipart/form-data.',
  );

/**
 * Writes the file part to a transfer file of its own (`incoming/<uuid>`, never a name derived
 * from the key or the client's file name), counting what arrives and cutting the transfer off past
 * the signed limit; complete, it is renamed over the key's object in one step.
 */
async function store(file: Readable, partial: string, target: string, maxBytes: number): Promise<void> {
  await mkdir(dirname(partial), { recursive: true, mode: PRIVATE_DIR });
  await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR });
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) {
        done(
          new Refusal(
            400,
            'EntityTooLarge',
            `Your proposed upload exceeds the maximum allowed size (${maxBytes} bytes).`,
          ),
        );
      } else done(null, chunk);
    },
  });
  await pipeline(file, counter, createWriteStream(partial, { flags: 'wx', mode: PRIVATE_FILE }));
  if (size === 0)
    throw new Refusal(
      400,
      'EntityTooSmall',
      'Your proposed upload is smaller than the minimum allowed size (1 byte).',
    );
  await rename(partial, target);
}

/**
 * Serves the upload form POST of a local import ticket like S3 serves a presigned POST: the form
 * fields must carry a valid signature for the key and come before the file; the file may not
 * exceed the signed size (the transfer is cut off, nothing is kept) nor arrive after expiry. A
 * transfer the client drops is discarded. 204 on success, as S3 answers by default. It never
 * rejects: whatever fails (the store, the disk, the cleanup) is answered — a 4xx for the client's
 * fault, else 500 — and logged (ADR 0106).
 */
export async function handleUpload(
  req: IncomingMessage,
  res: ServerResponse,
  options: { secret: Buffer; dir: string },
): Promise<void> {
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('multipart/form-data')) {
    req.resume();
    refuse(res, 400, 'InvalidArgument', 'POST requires multipart/form-data.');
    return;
  }
  // Field names are the client's: a table without a prototype.
  const fields: Record<string, string> = Object.create(null);
  let partial: string | undefined;
  let file: Readable | undefined;
  let writing: Promise<void> | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, fieldSize: 4096 } });
      } catch {
        reject(malformed());
        return;
      }
      // A client gone before its body arrived: nothing of it is kept.
      req.once('close', () => {
        if (!req.complete)
          reject(
            new Refusal(
              400,
              'IncompleteBody',
              'You did not provide the number of bytes specified by the Content-Length HTTP header.',
            ),
          );
      });
      req.once('error', () => reject(malformed()));
      parser.on('field', (name, value) => {
        fields[name] = value;
      });
      parser.on('file', (name, stream) => {
        // A part cut short errors its stream, maybe before anything reads it (the store is still
        // making its folders): the parser's own error or the pipeline answers it, never the process.
        stream.on('error', () => {});
        try {
          if (name !== 'file' || writing) {
            stream.resume();
            return;
          }
          const verdict = verifyLocalUpload(options.secret, fields);
          if ('refused' in verdict) {
            stream.resume();
            reject(new Refusal(403, 'AccessDenied', verdict.refused));
            return;
          }
          const target = localUploadPath(options.dir, verdict.key);
          partial = localIncomingPath(options.dir);
          file = stream;
          writing = store(stream, partial, target, verdict.maxBytes);
          writing.catch(reject);
        } catch (error) {
          stream.resume();
          reject(error);
        }
      });
      parser.on('error', () => reject(malformed()));
      parser.on('close', () => {
        if (!writing) {
          reject(
            new Refusal(
              400,
              'InvalidArgument',
              "POST requires exactly one file upload per request, in the field 'file'.",
            ),
          );
          return;
        }
        writing.then(resolve, reject);
      });
      req.pipe(parser);
    });
    res.writeHead(204, { Location: `${LOCAL_UPLOAD_PATH}/${encodeURI(fields.key ?? '')}` });
    res.end();
  } catch (error) {
    await discard(file, writing, partial);
    req.unpipe();
    req.resume();
    if (error instanceof Refusal) refuse(res, error.status, error.code, error.message);
    else {
      logger.error('local upload failed', errorFields(error));
      refuse(res, 500, 'InternalError', 'We encountered an internal error. Please try again.');
    }
  }
}

/** Ends a transfer that failed and removes its file (after its stream closed, so nothing writes it again). */
async function discard(
  file: Readable | undefined,
  writing: Promise<void> | undefined,
  partial: string | undefined,
): Promise<void> {
  file?.destroy();
  await writing?.catch(() => {});
  if (!partial) return;
  await rm(partial, { force: true }).catch((error: unknown) => {
    // A store whose folder is not one never held the file.
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
    logger.warn('local upload: a transfer file was not removed (the expiry sweep will)', errorFields(error));
  });
}

/** What one expiry pass removed. */
export interface ExpiredUploads {
  uploads: number;
  incomplete: number;
}

/**
 * Removes what the upload bucket's lifecycle rules remove on AWS: uploads (and their sealed
 * copies) older than `days`, transfers that never completed older than a day; then directories
 * left empty for an hour (ADR 0106). Ages are the files' modification times.
 */
export async function expireUploads(
  dir: string,
  now = new Date(),
  days = LOCAL_UPLOAD_EXPIRY_DAYS,
): Promise<ExpiredUploads> {
  const removed: ExpiredUploads = { uploads: 0, incomplete: 0 };
  const sweep = async (path: string, maxAgeMs: number, count: keyof ExpiredUploads, top: boolean) => {
    let names: string[];
    try {
      names = await readdir(path);
    } catch {
      return;
    }
    for (const name of names) {
      const entry = join(path, name);
      const info = await lstat(entry).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) await sweep(entry, maxAgeMs, count, false);
      else if (now.getTime() - info.mtimeMs > maxAgeMs) {
        await rm(entry, { force: true });
        removed[count]++;
      }
    }
    if (top) return;
    const info = await lstat(path).catch(() => undefined);
    if (info && now.getTime() - info.mtimeMs > 3600_000) await rmdir(path).catch(() => {});
  };
  await sweep(join(dir, 'uploads'), days * DAY_MS, 'uploads', true);
  await sweep(join(dir, 'sealed'), days * DAY_MS, 'uploads', true);
  await sweep(join(dir, LOCAL_INCOMING_DIR), LOCAL_INCOMPLETE_EXPIRY_DAYS * DAY_MS, 'incomplete', true);
  return removed;
}

/** The host's upload expiry: a pass now and every hour; `close()` stops it. */
export function startUploadExpiry(dir: string, intervalMs = EXPIRY_INTERVAL_MS): { close(): Promise<void> } {
  let inFlight: Promise<void> | undefined;
  const pass = () => {
    if (inFlight) return;
    inFlight = expireUploads(dir)
      .then((removed) => {
        if (removed.uploads + removed.incomplete > 0) logger.info('local uploads expired', { ...removed });
      })
      .catch((error: unknown) => logger.warn('local upload expiry failed', errorFields(error)))
      .finally(() => {
        inFlight = undefined;
      });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
