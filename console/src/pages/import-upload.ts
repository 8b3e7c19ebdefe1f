/**
 * The upload of an import's file to its ticket (createImport's `upload`): a multipart form POST
 * of the ticket's fields, then the file, to `upload.url` — S3's presigned POST in AWS, the local
 * host's `/local-uploads` stand-in locally. XMLHttpRequest, not fetch, so the bytes sent can be
 * shown as they go (`upload.onprogress`). The answer of a refusal is S3's XML error.
 */
import type { Schemas } from '#console/api.ts';
import { formatBytes } from '#console/format.ts';

export type UploadTicket = NonNullable<Schemas['ImportJob']['upload']>;

/** A refused or failed upload: the HTTP status (0: never answered) and S3's error code. */
export class UploadError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'UploadError';
  }
}

/** Code and message of S3's `<Error><Code/><Message/></Error>` answer (the local stand-in's too). */
export function s3ErrorOf(text: string): { code?: string; message?: string } {
  if (!text.trim().startsWith('<')) return {};
  try {
    const doc = new DOMParser().parseFromString(text, 'application/xml');
    if (doc.querySelector('parsererror')) return {};
    const code = doc.querySelector('Error > Code')?.textContent ?? undefined;
    const message = doc.querySelector('Error > Message')?.textContent ?? undefined;
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  } catch {
    return {};
  }
}

/** True when the ticket's URL is on another origin than the console (S3 in AWS). */
export function crossOrigin(ticket: UploadTicket): boolean {
  try {
    return new URL(ticket.url, location.href).origin !== location.origin;
  } catch {
    return false;
  }
}

/**
 * POSTs `file` to the ticket; `onProgress(sent, total)` as bytes go out. Resolves on a 2xx answer,
 * rejects with an UploadError otherwise. `signal` aborts the transfer.
 */
export function uploadFile(
  ticket: UploadTicket,
  file: File,
  onProgress: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (file.size > ticket.max_bytes) {
    return Promise.reject(
      new UploadError(
        0,
        'EntityTooLarge',
        `The file is ${formatBytes(file.size)}; this import takes at most ${formatBytes(ticket.max_bytes)}.`,
      ),
    );
  }
  if (Date.parse(ticket.expires_at) < Date.now()) {
    return Promise.reject(
      new UploadError(0, 'ExpiredToken', 'The upload ticket has expired; start a new import.'),
    );
  }
  const form = new FormData();
  // S3 takes the policy fields first and the file last.
  for (const [name, value] of Object.entries(ticket.fields)) form.append(name, value);
  form.append(ticket.file_field, file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(ticket.method, ticket.url);
    xhr.upload.onprogress = (event) => {
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size);
        resolve();
        return;
      }
      const { code, message } = s3ErrorOf(xhr.responseText ?? '');
      reject(
        new UploadError(
          xhr.status,
          code,
          `The upload was refused (${xhr.status}${code ? ` ${code}` : ''})${message ? `: ${message}` : '.'}`,
        ),
      );
    };
    xhr.onerror = () => {
      const where = new URL(ticket.url, location.href).origin;
      reject(
        new UploadError(
          0,
          undefined,
          `The upload did not reach ${where} (network error${crossOrigin(ticket) ? ', or the storage refused this origin (CORS)' : ''}).`,
        ),
      );
    };
    xhr.onabort = () => reject(new UploadError(0, 'Aborted', 'The upload was stopped.'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}
