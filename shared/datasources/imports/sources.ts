import { createWriteStream } from 'node:fs';
import { mkdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { importConfig } from '../../config/env.ts';
import { InvalidInputError, UnavailableError } from '../../domain/errors.ts';
import { ImportInputError } from '../../domain/import-sources.ts';
import type { ImportJob, ImportUriPolicy } from '../../domain/imports.ts';
import { captureClient } from '../../log/tracer.ts';

/**
 * Where an import's file comes from (ADR 0083): an upload (the upload store), an `s3://` URI in a
 * bucket the operator allows, or — locally — a path under the configured import directory.
 * Nothing else: http(s), other buckets and paths outside the root are refused with a 400.
 */
export class ConfiguredUriPolicy implements ImportUriPolicy {
  async admit(uri: string): Promise<string> {
    const cfg = importConfig();
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
    let path: string | undefined;
    if (uri.startsWith('file://')) {
      try {
        path = fileURLToPath(uri);
      } catch {
        throw new InvalidInputError('invalid_uri', `'${uri}' is not a valid file URI.`);
      }
    } else if (isAbsolute(uri)) path = uri;
    if (!path || !root) {
      throw new InvalidInputError(
        'uri_not_allowed',
        root
          ? `'${uri}' is neither an allowed s3:// URI nor a path under the import directory.`
          : `'${uri}' is not an allowed s3:// URI (imports read only from the upload store and the buckets the operator lists).`,
      );
    }
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      throw new InvalidInputError('source_not_found', `'${uri}' does not exist.`);
    }
    const realRoot = await realpath(root).catch(() => resolve(root));
    if (!real.startsWith(realRoot + sep)) {
      throw new InvalidInputError('uri_not_allowed', `'${uri}' lies outside the import directory ${root}.`);
    }
    if (!(await stat(real)).isFile()) throw new InvalidInputError('invalid_uri', `'${uri}' is not a file.`);
    return real;
  }
}

let s3: S3Client | undefined;

/** Downloads an S3 object to `target` (streamed to disk; memory stays flat). */
async function download(bucket: string, key: string, target: string): Promise<void> {
  s3 ??= captureClient(new S3Client({}));
  let body: Readable;
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    body = out.Body as Readable;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound') {
      throw new ImportInputError('source_not_found', `s3://${bucket}/${key} does not exist (any more).`);
    }
    throw new UnavailableError('source_unavailable', `s3://${bucket}/${key} could not be read; retrying.`);
  }
  await mkdir(dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  await pipeline(body, createWriteStream(partial));
  await rename(partial, target);
}

/**
 * The local file of an import's source: an upload in the local upload directory or a local path
 * as is; an S3 object (upload bucket or allowed URI) is downloaded once per container into /tmp
 * (Lambda's ephemeral storage) and reused by the next invocations there.
 */
export async function sourceFile(
  job: Pick<ImportJob, 'id' | 'source_kind' | 'source_location'>,
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
  const target = join(tmpdir(), 'geoplane-imports', job.id, 'source');
  const present = await stat(target).catch(() => undefined);
  if (!present) await download(bucket, key, target);
  return target;
}

/** Removes an import's downloaded copy (after its load). */
export async function releaseSourceFile(importId: string): Promise<void> {
  await rm(join(tmpdir(), 'geoplane-imports', importId), { recursive: true, force: true });
}
