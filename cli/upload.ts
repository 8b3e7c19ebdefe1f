import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { networkMessage } from './client.ts';
import { assertSecureTransport, CliError, type Connection, UnreachableError } from './config.ts';
import { multipartBody, multipartStream } from './multipart.ts';
import { plain } from './terminal.ts';
import type { UploadTicket } from './types.ts';

/** Reads a whole (small) response. */
function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** `<Code>` and `<Message>` of an S3-style XML error, as plain text (it is the server's; ADR 0109). */
export function s3Error(status: number, text: string): string {
  const pick = (tag: string) =>
    new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`)
      .exec(text)?.[1]
      ?.trim()
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  const code = plain(pick('Code'));
  const message = plain(pick('Message'));
  if (code || message)
    return `upload refused (HTTP ${status}${code ? ` ${code}` : ''})${message ? `: ${message}` : ''}`;
  return `upload refused (HTTP ${status})${text ? `: ${plain(text.slice(0, 200))}` : ''}`;
}

/**
 * POSTs the file to a presigned form (S3's presigned POST, or the local host's stand-in): the
 * fields first, then the file, streamed from disk with an exact Content-Length. The upload URL
 * is signed, so no API key goes with it. `onProgress` is told the file bytes sent so far.
 */
export async function uploadFile(
  connection: Connection,
  ticket: UploadTicket,
  filePath: string,
  fileSize: number,
  onProgress: (sent: number) => void,
): Promise<void> {
  if (fileSize > ticket.max_bytes)
    throw new CliError(`the file is ${fileSize} bytes; this upload takes at most ${ticket.max_bytes} bytes`);
  let url: URL;
  try {
    url = new URL(ticket.url);
  } catch {
    throw new CliError('the API gave an upload URL that is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new CliError(`the API gave an upload URL that is not http(s) (${plain(url.protocol)})`);
  // The form's fields are a signed upload grant: they don't cross the network in clear either.
  assertSecureTransport(url, 'the upload', CliError);
  const body = multipartBody({
    fields: ticket.fields,
    fileField: ticket.file_field || 'file',
    filename: basename(filePath),
    fileSize,
  });
  let sent = 0;
  const stream = multipartStream(body, filePath, (n) => {
    sent += n;
    onProgress(sent);
  });
  const isHttps = url.protocol === 'https:';
  const send = isHttps ? httpsRequest : httpRequest;
  let failure: Error | undefined;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        // The API's agent trusts the same CA; the local upload endpoint is served by the same host.
        ...(isHttps && connection.agent ? { agent: connection.agent } : {}),
        headers: { 'Content-Type': body.contentType, 'Content-Length': String(body.contentLength) },
      },
      resolve,
    );
    req.on('error', (error) =>
      // Let a failure of the file stream (which destroys the request) be recorded first.
      setImmediate(() =>
        reject(
          failure
            ? new CliError(`upload failed: ${failure.message}`)
            : new UnreachableError(networkMessage(error, url.href)),
        ),
      ),
    );
    // A refusal may come before the whole body is sent (the server cuts the transfer): the answer wins.
    pipeline(stream, req).catch((error: Error) => {
      failure = error;
    });
  });
  const text = await readBody(res);
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) throw new CliError(s3Error(status, text));
  if (failure) throw new CliError(`upload failed: ${failure.message}`);
}
