import { createWriteStream, mkdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { errorFields, logger } from '../../shared/log/logger.ts';
import { localUploadPath, verifyLocalUpload } from '../../shared/platform/import-uploads.ts';

/** Where the local host takes import uploads (the stand-in for S3's presigned POST). */
export const LOCAL_UPLOAD_PATH = '/local-uploads';

/** S3 answers refused POSTs with an XML error; so does this stand-in (plain text suffices for clients). */
function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return;
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

/**
 * Serves the upload form POST of a local import ticket like S3 serves a presigned POST: the form
 * fields must carry a valid signature for the key and come before the file; the file may not
 * exceed the signed size (the transfer is cut off, nothing is kept) nor arrive after expiry.
 * 204 on success, as S3 answers by default.
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
  const fields: Record<string, string> = {};
  let stored: string | undefined;
  let partial: string | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, fieldSize: 4096 } });
      } catch {
        reject(
          new Refusal(
            400,
            'MalformedPOSTRequest',
            'The body of your POST request is not well-formed multipart/form-data.',
          ),
        );
        return;
      }
      let writing: Promise<void> | undefined;
      parser.on('field', (name, value) => {
        fields[name] = value;
      });
      parser.on('file', (name, file) => {
        if (name !== 'file') {
          file.resume();
          return;
        }
        const verdict = verifyLocalUpload(options.secret, fields);
        if ('refused' in verdict) {
          file.resume();
          reject(new Refusal(403, 'AccessDenied', verdict.refused));
          return;
        }
        const target = localUploadPath(options.dir, verdict.key);
        partial = `${target}.partial`;
        let size = 0;
        // Counts what arrives and cuts the transfer off past the signed limit (nothing is kept).
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            if (size > verdict.maxBytes) {
              done(
                new Refusal(
                  400,
                  'EntityTooLarge',
                  `Your proposed upload exceeds the maximum allowed size (${verdict.maxBytes} bytes).`,
                ),
              );
            } else done(null, chunk);
          },
        });
        mkdirSync(dirname(target), { recursive: true });
        writing = (async () => {
          await pipeline(file, counter, createWriteStream(partial as string));
          if (size === 0)
            throw new Refusal(
              400,
              'EntityTooSmall',
              'Your proposed upload is smaller than the minimum allowed size (1 byte).',
            );
          await rename(partial as string, target);
          stored = target;
        })();
        writing.catch(reject);
      });
      parser.on('error', () =>
        reject(
          new Refusal(
            400,
            'MalformedPOSTRequest',
            'The body of your POST request is not well-formed multipart/form-data.',
          ),
        ),
      );
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
    if (partial) await rm(partial, { force: true });
    if (!stored) req.unpipe();
    req.resume();
    if (error instanceof Refusal) refuse(res, error.status, error.code, error.message);
    else {
      logger.error('local upload failed', errorFields(error));
      refuse(res, 500, 'InternalError', 'We encountered an internal error. Please try again.');
    }
  }
}
