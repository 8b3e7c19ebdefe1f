import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, mkdir, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { config, importConfig } from '#config/env.ts';
import { UnavailableError } from '#domain/errors.ts';
import type { ImportUploads, ImportUploadTicket, SealedUpload } from '#domain/imports.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

/**
 * The upload store of imports (ADR 0083, 0106). On AWS an S3 presigned POST whose policy pins the
 * key and enforces `content-length-range`; locally the host serves the same form-POST contract
 * (`infra/local/uploads.ts`) and checks the same things: the HMAC signature over key, expiry and
 * size limit, and the size of what arrives. Keys are made of ids only (`uploads/<workspace>/<import>`):
 * no client name ever becomes part of a key or a path.
 */

const unavailable = () =>
  new UnavailableError('upload_store_unavailable', 'The upload store is unavailable; retry shortly.');

/** S3: presigned POSTs into the upload bucket. */
export class S3Uploads implements ImportUploads {
  constructor(
    private readonly bucket: string,
    private readonly s3: Pick<S3Client, 'send'> = awsClient(new S3Client({})),
  ) {}

  async ticket(
    key: string,
    maxBytes: number,
    expiresAt: Date,
  ): Promise<Omit<ImportUploadTicket, 'max_bytes'>> {
    const seconds = Math.max(60, Math.round((expiresAt.getTime() - Date.now()) / 1000));
    try {
      const post = await createPresignedPost(this.s3 as S3Client, {
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
      throw unavailable();
    }
  }

  /**
   * The object's size and ETag: the workflow reads it with `If-Match` on that ETag, so a POST of
   * the (still valid) form after the start fails the load instead of loading a file discovery
   * never saw (S3 answers 412 Precondition Failed).
   */
  async seal(key: string): Promise<SealedUpload | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, location: key, etag: head.ETag ?? '' };
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NotFound' || name === 'NoSuchKey') return undefined;
      throw unavailable();
    }
  }

  async remove(key: string): Promise<void> {
    try {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch {
      throw unavailable();
    }
  }
}

/** The signature of a local upload ticket: HMAC-SHA256 over key, expiry and size limit. */
function sign(secret: Buffer, key: string, expires: string, maxBytes: string): string {
  return createHmac('sha256', secret)
    .update(`geoplane-upload\n${key}\n${expires}\n${maxBytes}`)
    .digest('base64url');
}

/**
 * An upload key the local store takes: `uploads/` and up to four segments of at most 128 safe
 * characters that don't start with a dot (no `.`, `..`, hidden names; no path longer than a
 * file system allows). The domain's keys are `uploads/<workspace id>/<import id>`.
 */
const UPLOAD_KEY = /^uploads(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}){1,4}$/;

/** Where sealed copies live in the local store: `sealed/<key>/<seal id>`. */
const SEALED = 'sealed/';

/** Where the local store receives transfers in flight (`incoming/<uuid>`), beside the objects. */
export const LOCAL_INCOMING_DIR = 'incoming';

/** What a verified local upload form says. */
export interface VerifiedUpload {
  key: string;
  maxBytes: number;
}

/**
 * Checks the fields of a local upload form: the signature, the expiry, the key. A refusal names
 * why (as S3 does with its AccessDenied / policy errors).
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
  if (!UPLOAD_KEY.test(key)) return { refused: 'Invalid key.' };
  return { key, maxBytes: Number(maxBytes) };
}

/** The key of a local key or sealed location (`sealed/<key>/<seal id>`); undefined for anything else. */
function keyOf(keyOrLocation: string): string | undefined {
  if (UPLOAD_KEY.test(keyOrLocation)) return keyOrLocation;
  if (!keyOrLocation.startsWith(SEALED)) return undefined;
  const key = keyOrLocation.slice(SEALED.length, keyOrLocation.lastIndexOf('/'));
  return UPLOAD_KEY.test(key) && /^[0-9a-f-]{36}$/.test(keyOrLocation.slice(key.length + SEALED.length + 1))
    ? key
    : undefined;
}

/** `path` inside `dir`, or an error (never a path outside the store). */
function inside(dir: string, path: string): string {
  const full = resolve(dir, path);
  if (!full.startsWith(resolve(dir) + sep)) throw new Error('upload location outside the upload directory');
  return full;
}

/** Where a local upload key (or a sealed location) is stored: inside `dir`, never outside. */
export function localUploadPath(dir: string, keyOrLocation: string): string {
  if (!keyOf(keyOrLocation)) throw new Error('not an upload key or location of the local store');
  return inside(dir, keyOrLocation);
}

/** Files a host writes for others to read: none. Directories and files of the store are the owner's. */
const PRIVATE_DIR = 0o700;

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

  /** Size of the object the form stored under `key`; undefined when there is none. */
  async size(key: string): Promise<number | undefined> {
    try {
      const info = await stat(localUploadPath(this.dir, key));
      return info.isFile() ? info.size : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * A hard link of the upload under a name of its own (`sealed/<key>/<seal id>`): a later POST
   * replaces the form's object (a new file renamed over it), never the sealed one. No bytes are
   * copied. Each seal has its own name, so two starts racing can't swap the file under the winner.
   */
  async seal(key: string): Promise<SealedUpload | undefined> {
    const source = localUploadPath(this.dir, key);
    const id = randomUUID();
    const location = `${SEALED}${key}/${id}`;
    const target = localUploadPath(this.dir, location);
    await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR });
    try {
      await link(source, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Nothing uploaded (or not a file: a directory can't be linked).
      if (code === 'ENOENT' || code === 'EPERM' || code === 'EISDIR') {
        await rmdir(dirname(target)).catch(() => {});
        return undefined;
      }
      // A file system without hard links: a copy is as sealed, only slower.
      if (code !== 'EXDEV' && code !== 'ENOTSUP' && code !== 'EMLINK') throw error;
      await copyFile(source, target, constants.COPYFILE_EXCL);
    }
    const info = await stat(target);
    return { size: info.size, location, etag: id };
  }

  async remove(keyOrLocation: string): Promise<void> {
    const key = keyOf(keyOrLocation);
    // Nothing can be stored under anything else (the form refuses such keys).
    if (!key) return;
    await rm(localUploadPath(this.dir, key), { force: true });
    // Its seals (one per start): `sealed/<key>/`. Empty parents stay for the host's expiry sweep.
    await rm(inside(this.dir, `${SEALED}${key}`), { recursive: true, force: true });
  }
}

/** The local upload signing key (derived from the local secret key). */
export function localUploadSecret(): Buffer {
  const base = config().GEOPLANE_SECRET_KEY;
  if (!base) throw new Error('GEOPLANE_SECRET_KEY must be set for local uploads');
  return createHmac('sha256', Buffer.from(base, 'base64')).update('geoplane-upload-key').digest();
}

/** The local store's directory where transfers in flight are written (see `LOCAL_INCOMING_DIR`). */
export function localIncomingPath(dir: string): string {
  return join(dir, LOCAL_INCOMING_DIR, randomUUID());
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
