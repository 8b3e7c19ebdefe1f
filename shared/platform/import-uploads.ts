import { createHmac, timingSafeEqual } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { config, importConfig } from '../config/env.ts';
import { UnavailableError } from '../domain/errors.ts';
import type { ImportUploads, ImportUploadTicket } from '../domain/imports.ts';
import { captureClient } from '../log/tracer.ts';

/**
 * The upload store of imports (ADR 0083). On AWS an S3 presigned POST whose policy pins the key
 * and enforces `content-length-range`; locally the host serves the same form-POST contract
 * (`infra/local/uploads.ts`) and checks the same things: the HMAC signature over key, expiry and
 * size limit, and the size of what arrives.
 */

/** S3: presigned POSTs into the upload bucket. */
export class S3Uploads implements ImportUploads {
  private readonly s3 = captureClient(new S3Client({}));
  constructor(private readonly bucket: string) {}

  async ticket(
    key: string,
    maxBytes: number,
    expiresAt: Date,
  ): Promise<Omit<ImportUploadTicket, 'max_bytes'>> {
    const seconds = Math.max(60, Math.round((expiresAt.getTime() - Date.now()) / 1000));
    try {
      const post = await createPresignedPost(this.s3, {
        Bucket: this.bucket,
        Key: key,
        Conditions: [
          ['content-length-range', 1, maxBytes],
          ['eq', '$key', key],
        ],
        Expires: seconds,
      });
      return {
        url: post.url,
        method: 'POST',
        fields: post.fields,
        file_field: 'file',
        expires_at: expiresAt.toISOString(),
      };
    } catch {
      throw new UnavailableError(
        'upload_store_unavailable',
        'The upload store is unavailable; retry shortly.',
      );
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NotFound' || name === 'NoSuchKey') return undefined;
      throw new UnavailableError(
        'upload_store_unavailable',
        'The upload store is unavailable; retry shortly.',
      );
    }
  }

  async remove(key: string): Promise<void> {
    try {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch {
      throw new UnavailableError(
        'upload_store_unavailable',
        'The upload store is unavailable; retry shortly.',
      );
    }
  }
}

/** The signature of a local upload ticket: HMAC-SHA256 over key, expiry and size limit. */
function sign(secret: Buffer, key: string, expires: string, maxBytes: string): string {
  return createHmac('sha256', secret)
    .update(`geoplane-upload\n${key}\n${expires}\n${maxBytes}`)
    .digest('base64url');
}

/** What a verified local upload form says. */
export interface VerifiedUpload {
  key: string;
  maxBytes: number;
}

/**
 * Checks the fields of a local upload form: the signature, the expiry. A refusal names why
 * (as S3 does with its AccessDenied / policy errors).
 */
export function verifyLocalUpload(
  secret: Buffer,
  fields: Record<string, string>,
  now = Date.now(),
): VerifiedUpload | { refused: string } {
  const { key, expires, max_bytes: maxBytes, signature } = fields;
  if (!key || !expires || !maxBytes || !signature)
    return { refused: 'The form lacks key, expires, max_bytes or signature.' };
  const expected = Buffer.from(sign(secret, key, expires, maxBytes));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { refused: 'Invalid signature.' };
  if (Number(expires) < now) return { refused: 'The upload URL has expired.' };
  if (!/^uploads\/[A-Za-z0-9._/-]+$/.test(key) || key.includes('..')) return { refused: 'Invalid key.' };
  return { key, maxBytes: Number(maxBytes) };
}

/** Where a local upload key is stored (inside `dir`, never outside). */
export function localUploadPath(dir: string, key: string): string {
  const path = resolve(dir, key);
  if (!path.startsWith(resolve(dir) + sep)) throw new Error('upload key outside the upload directory');
  return path;
}

/** Local mode: the host's form-POST endpoint and the data dir. */
export class LocalUploads implements ImportUploads {
  constructor(
    private readonly secret: Buffer,
    private readonly url: string,
    private readonly dir: string,
  ) {}

  async ticket(
    key: string,
    maxBytes: number,
    expiresAt: Date,
  ): Promise<Omit<ImportUploadTicket, 'max_bytes'>> {
    const expires = String(expiresAt.getTime());
    const max = String(maxBytes);
    return {
      url: this.url,
      method: 'POST',
      fields: { key, expires, max_bytes: max, signature: sign(this.secret, key, expires, max) },
      file_field: 'file',
      expires_at: expiresAt.toISOString(),
    };
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await stat(localUploadPath(this.dir, key))).size;
    } catch {
      return undefined;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(localUploadPath(this.dir, key), { force: true });
  }
}

/** The local upload signing key (derived from the local secret key). */
export function localUploadSecret(): Buffer {
  const base = config().GEOPLANE_SECRET_KEY;
  if (!base) throw new Error('GEOPLANE_SECRET_KEY must be set for local uploads');
  return createHmac('sha256', Buffer.from(base, 'base64')).update('geoplane-upload-key').digest();
}

let uploads: ImportUploads | undefined;

/** The configured upload store: S3 when deployed, else the local host's. */
export function importUploads(): ImportUploads {
  if (uploads) return uploads;
  const cfg = importConfig();
  if (cfg.uploadBucket) uploads = new S3Uploads(cfg.uploadBucket);
  else if (cfg.localUploadUrl && cfg.localUploadDir) {
    uploads = new LocalUploads(localUploadSecret(), cfg.localUploadUrl, cfg.localUploadDir);
  } else throw new UnavailableError('upload_store_unavailable', 'No upload store is configured.');
  return uploads;
}
