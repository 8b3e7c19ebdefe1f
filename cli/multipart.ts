import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

/** A multipart/form-data body: the parts before the file, the file's size, the closing part. */
export interface MultipartBody {
  boundary: string;
  /** The value of the Content-Type header. */
  contentType: string;
  /** The exact number of bytes the body has: head + file + tail. */
  contentLength: number;
  /** The form fields and the file part's header. */
  head: Buffer;
  fileSize: number;
  /** The end of the file part and the closing boundary. */
  tail: Buffer;
}

/** Quotes a value of a Content-Disposition parameter (no CR/LF; `"` and `\` escaped). */
function quoted(value: string): string {
  return `"${value.replace(/[\r\n]/g, ' ').replace(/(["\\])/g, '\\$1')}"`;
}

/**
 * Lays out a form POST the way S3's presigned POST wants it: every field first, in order, then
 * the file in `fileField`. The file itself is not read here; only its size counts.
 */
export function multipartBody(options: {
  fields: Record<string, string>;
  fileField: string;
  filename: string;
  fileSize: number;
  fileType?: string;
  boundary?: string;
}): MultipartBody {
  const boundary = options.boundary ?? `----geoplane-${randomBytes(16).toString('hex')}`;
  const parts: string[] = [];
  for (const [name, value] of Object.entries(options.fields)) {
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`);
  }
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(options.fileField)}; filename=${quoted(options.filename)}\r\n` +
      `Content-Type: ${options.fileType ?? 'application/octet-stream'}\r\n\r\n`,
  );
  const head = Buffer.from(parts.join(''), 'utf8');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  return {
    boundary,
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + options.fileSize + tail.length,
    head,
    fileSize: options.fileSize,
    tail,
  };
}

/**
 * The body as a stream: the head, the file streamed from disk (never whole in memory), the tail.
 * `onFileBytes` is told each chunk of the file as it is read. A file whose size changed since
 * it was measured fails the stream (the Content-Length would lie).
 */
export function multipartStream(
  body: MultipartBody,
  filePath: string,
  onFileBytes: (n: number) => void = () => {},
): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    yield body.head;
    let read = 0;
    if (body.fileSize > 0) {
      // `end` is inclusive; a file that grew is cut at the measured size and then refused below.
      for await (const chunk of createReadStream(filePath, {
        end: body.fileSize - 1,
        highWaterMark: 1 << 20,
      })) {
        const buf = chunk as Buffer;
        read += buf.length;
        onFileBytes(buf.length);
        yield buf;
      }
    }
    if (read !== body.fileSize)
      throw new Error(`the file changed while it was uploaded (${read} of ${body.fileSize} bytes read)`);
    yield body.tail;
  }
  return Readable.from(generate(), { objectMode: false });
}
