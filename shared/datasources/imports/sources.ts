import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, readdir, realpath, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { importConfig } from '#config/env.ts';
import { InvalidInputError, UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import type { ImportJob, ImportUriPolicy } from '#domain/imports.ts';
import { awsClient } from '#telemetry/aws-clients.ts';
import { admitUrl, configuredFetchOptions, fetchUrlToFile, importUrlTargets } from './https-source.ts';

/**
 * Where an import's file comes from (ADR 0083): an upload (the upload store), an `s3://` URI in a
 * bucket the operator allows, an `https://` URL whose host passes the network policy (ADR 0129),
 * or — locally — a path under the configured import directory. Nothing else: plain http, other
 * buckets and paths outside the root are refused with a 400. A local
 * path gets one answer whether it lies outside the directory, does not exist, is no file or can't
 * be read, and a path outside is refused before the file system is asked (ADR 0106): the answer
 * tells nothing about the machine.
 */
export class ConfiguredUriPolicy implements ImportUriPolicy {
  async admit(uri: string): Promise<string> {
    const cfg = importConfig();
    if (/^https?:/i.test(uri)) return admitUrl(uri, importUrlTargets());
    if (uri.startsWith('s3://')) {
      const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/.exec(uri);
      if (!match) throw new InvalidInputError('invalid_uri', `'${uri}' is not an s3://bucket/key URI.`);
      if (!cfg.allowedBuckets.includes(match[1] as string)) {
        throw new InvalidInputError(
          'uri_not_allowed',
          `Bucket '${match[1]}' is not one imports may read (the operator lists them in cdk.json importBuckets).`,
        );
      }
      return uri;
    }
    const root = cfg.localImportRoot;
    const refused = new InvalidInputError(
      'uri_not_allowed',
      root
        ? `'${uri}' is not a file imports may read: name an allowed s3:// URI or a readable file under the import directory.`
        : `'${uri}' is not an allowed s3:// URI (imports read only from the upload store and the buckets the operator lists).`,
    );
    let path: string | undefined;
    if (uri.startsWith('file://')) {
      try {
        path = fileURLToPath(uri);
      } catch {
        throw refused;
      }
    } else if (isAbsolute(uri)) path = uri;
    if (!path || !root) throw refused;
    const roots = [resolve(root), await realpath(root).catch(() => resolve(root))];
    const under = (p: string) => roots.some((r) => p.startsWith(r + sep));
    // Outside the directory by its very name: refused without a look at the file system.
    if (!under(resolve(path))) throw refused;
    try {
      const real = await realpath(path);
      if (!under(real) || !(await stat(real)).isFile()) throw refused;
      await access(real, constants.R_OK);
      return real;
    } catch {
      throw refused;
    }
  }
}

let s3: Pick<S3Client, 'send'> | undefined;

/**
 * Downloads an S3 object to `target` (streamed to disk; memory stays flat). With `etag` (an upload
 * sealed at its start, ADR 0106) only that very object: S3 answers 412 when the form was POSTed
 * again since, and the import fails rather than load a file its discovery never saw.
 */
async function download(
  client: Pick<S3Client, 'send'>,
  bucket: string,
  key: string,
  target: string,
  etag?: string,
): Promise<void> {
  let body: Readable;
  try {
    const out = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, ...(etag ? { IfMatch: etag } : {}) }),
    );
    body = out.Body as Readable;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound') {
      throw new ImportInputError('source_not_found', `s3://${bucket}/${key} does not exist (any more).`);
    }
    if (name === 'PreconditionFailed') {
      throw new ImportInputError(
        'upload_changed',
        'The file was uploaded again after the import started; create a new import for the new file.',
      );
    }
    throw new UnavailableError('source_unavailable', `s3://${bucket}/${key} could not be read; retrying.`);
  }
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  const partial = `${target}.partial`;
  try {
    await pipeline(body, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** Where the downloaded copies live: one dir per import, named by its id. */
const copiesDir = () => join(tmpdir(), 'geoplane-imports');

/** An import id, as a copy's dir is named (nothing else in the copies' dir is touched). */
const IMPORT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * How long a copy no step has used stays. A warm Lambda keeps /tmp, and an import's steps need not
 * come back to the instance that downloaded its file (discovery here, the load elsewhere after the
 * plan): a copy idle this long is swept by the next acquisition. Every acquisition marks its own
 * copy as used, and a step runs far shorter than this.
 */
export const STALE_COPY_MS = 60 * 60_000;

/**
 * The path of `importId`'s downloaded copy, marked as used now; first the copies of other imports
 * idle for STALE_COPY_MS are removed.
 */
async function copyOf(importId: string): Promise<{ path: string; present: boolean }> {
  const now = Date.now();
  for (const name of await readdir(copiesDir()).catch(() => [] as string[])) {
    if (name === importId || !IMPORT_ID.test(name)) continue;
    const dir = join(copiesDir(), name);
    const used = await stat(dir).then(
      (s) => s.mtimeMs,
      () => now,
    );
    if (now - used > STALE_COPY_MS) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
  const dir = join(copiesDir(), importId);
  const path = join(dir, 'source');
  const present = (await stat(path).catch(() => undefined)) !== undefined;
  if (present) await utimes(dir, now / 1000, now / 1000).catch(() => undefined);
  return { path, present };
}

/**
 * The local file of an import's source: an upload in the local upload directory (where startImport
 * sealed it) or a local path as is; an S3 object (upload bucket or allowed URI) or an https URL
 * (ADR 0129) is downloaded once per container into /tmp (Lambda's ephemeral storage) and reused by
 * the next invocations there.
 * Every path here is made of ids and the locations the server chose, never of a client's name.
 */
export async function sourceFile(
  job: Pick<ImportJob, 'id' | 'source_kind' | 'source_location' | 'source_etag'>,
  options: { s3?: Pick<S3Client, 'send'> } = {},
): Promise<string> {
  const cfg = importConfig();
  if (job.source_kind === 'upload' && !cfg.uploadBucket) {
    const dir = cfg.localUploadDir;
    if (!dir) throw new Error('no local upload directory configured');
    const path = resolve(dir, job.source_location);
    if (!path.startsWith(resolve(dir) + sep)) throw new Error('upload key outside the upload directory');
    await stat(path).catch(() => {
      throw new ImportInputError('source_not_found', 'The uploaded file is gone; create a new import.');
    });
    return path;
  }
  if (job.source_kind === 'uri' && job.source_location.startsWith('https://')) {
    const copy = await copyOf(job.id);
    if (!copy.present) await fetchUrlToFile(job.source_location, copy.path, configuredFetchOptions());
    return copy.path;
  }
  const [bucket, key] =
    job.source_kind === 'upload'
      ? [cfg.uploadBucket as string, job.source_location]
      : (() => {
          if (!job.source_location.startsWith('s3://')) return [undefined, job.source_location];
          const rest = job.source_location.slice(5);
          const slash = rest.indexOf('/');
          return [rest.slice(0, slash), rest.slice(slash + 1)];
        })();
  if (!bucket) {
    await stat(key).catch(() => {
      throw new ImportInputError('source_not_found', `${key} does not exist (any more).`);
    });
    return key;
  }
  const copy = await copyOf(job.id);
  if (!copy.present) {
    if (!options.s3) s3 ??= awsClient(new S3Client({}));
    const client = options.s3 ?? (s3 as Pick<S3Client, 'send'>);
    const etag = job.source_kind === 'upload' ? job.source_etag : undefined;
    await download(client, bucket, key, copy.path, etag || undefined);
  }
  return copy.path;
}

/** Removes an import's downloaded copy, if this instance has one (after its load, or its end). */
export async function releaseSourceFile(importId: string): Promise<void> {
  await rm(join(copiesDir(), importId), { recursive: true, force: true });
}
