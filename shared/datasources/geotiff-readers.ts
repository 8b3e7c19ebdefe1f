import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import { config, runsInLambda } from '#config/env.ts';
import { InvalidInputError, RuleViolationError, UnavailableError } from '#domain/errors.ts';
import { localRootPath, normaliseRoot, ROOT_NOT_ALLOWED } from '#domain/mosaics.ts';
import { sidecarClient } from '#telemetry/aws-clients.ts';

/** Port: byte ranges of one raster source (a local file or an S3 object). */
export interface ByteRangeReader {
  /** Up to `length` bytes from `offset` (fewer at the end of the source, none past it). */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Port: the files under one mosaic root, local or S3, behind the same three calls. */
export interface RootStore {
  checkRoot(): Promise<string | undefined>;
  list(pattern: RegExp): Promise<string[]>;
  open(relativePath: string): Promise<ByteRangeReader>;
}

/** Files listed per harvest at most (a pattern over a huge tree must stay a bounded request). */
const MAX_LISTED = 10_000;

const unreadable = (path: string, why: string) =>
  new RuleViolationError('unreadable_source', `Source '${path}' can't be read: ${why}.`);

const inside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * The real path of a local root, when it lies under the configured mosaic directory
 * (GEOPLANE_MOSAIC_ROOT, default `<data dir>/mosaics`; ADR 0074), else why not. The path must
 * be inside it as written (so nothing outside is even looked at) and once symlinks are resolved
 * (so a link can't lead out). A root that does not exist is `missing` with its errno.
 */
async function confine(
  rootUri: string,
): Promise<{ real: string } | { refused: string } | { missing: string }> {
  const local = localRootPath(rootUri);
  if ('refused' in local) return local;
  const configured = config().GEOPLANE_MOSAIC_ROOT;
  if (!configured)
    return { refused: 'local mosaic roots are not enabled on this server (GEOPLANE_MOSAIC_ROOT)' };
  const base = resolve(configured);
  const outside = { refused: `a local root_uri must lie under the mosaic directory ${base}` };
  let realBase: string;
  try {
    realBase = await realpath(base);
  } catch {
    return outside;
  }
  if (!inside(local.path, base) && !inside(local.path, realBase)) return outside;
  let real: string;
  try {
    real = await realpath(local.path);
  } catch (error) {
    return { missing: (error as NodeJS.ErrnoException).code ?? 'unreadable' };
  }
  return inside(real, realBase) ? { real } : outside;
}

/** The real root for reading a stored service's files; a root outside the mosaic directory is 422. */
async function readableRoot(rootUri: string): Promise<string | undefined> {
  const confined = await confine(rootUri);
  if ('refused' in confined) {
    throw new RuleViolationError(ROOT_NOT_ALLOWED, `root_uri '${rootUri}' is refused: ${confined.refused}.`);
  }
  return 'real' in confined ? confined.real : undefined;
}

/**
 * A local directory (local mode), confined under the configured mosaic directory (ADR 0074).
 * Symlinks leading outside the root are refused.
 */
export function localRoot(rootUri: string): RootStore {
  return {
    async checkRoot() {
      if (runsInLambda()) return 'local directories are served in local mode only; use s3://';
      const confined = await confine(rootUri);
      if ('refused' in confined) {
        throw new InvalidInputError(
          ROOT_NOT_ALLOWED,
          `root_uri '${rootUri}' is refused: ${confined.refused}.`,
        );
      }
      if ('missing' in confined) return confined.missing;
      try {
        if (!(await stat(confined.real)).isDirectory()) return 'not a directory';
        await readdir(confined.real);
        return undefined;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code ?? 'unreadable';
      }
    },
    async list(pattern) {
      const root = await readableRoot(rootUri);
      if (!root) return [];
      const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      const out: string[] = [];
      for (const e of entries) {
        if (!e.isFile()) continue;
        const rel = join(e.parentPath ?? e.path, e.name)
          .slice(root.length + 1)
          .split(sep)
          .join('/');
        if (pattern.test(rel)) out.push(rel);
        if (out.length >= MAX_LISTED) break;
      }
      return out.sort();
    },
    async open(relativePath) {
      const realRoot = await readableRoot(rootUri);
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        if (!realRoot) throw unreadable(relativePath, 'root_uri does not exist');
        const real = await realpath(join(realRoot, relativePath));
        if (!real.startsWith(realRoot + sep)) throw unreadable(relativePath, 'it leads outside root_uri');
        handle = await open(real, 'r');
      } catch (error) {
        if (error instanceof RuleViolationError) throw error;
        throw unreadable(relativePath, (error as NodeJS.ErrnoException).code ?? 'not readable');
      }
      return {
        async read(offset, length) {
          const buffer = new Uint8Array(length);
          const { bytesRead } = await handle.read(buffer, 0, length, offset);
          return buffer.subarray(0, bytesRead);
        },
        close: () => handle.close(),
      };
    },
  };
}

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

type S3Sdk = typeof import('./s3-rasters-sidecar.ts');

/**
 * The S3 client of the raster roots, loaded and built on the first read of an `s3://` root (ADR
 * 0153): the sidecar beside the bundle, or the package from source.
 */
const s3Client = /* @__PURE__ */ sidecarClient(
  () =>
    (typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./s3-rasters.sidecar.mjs', import.meta.url).href)
      : import('./s3-rasters-sidecar.ts')) as Promise<S3Sdk>,
  (sdk): S3Client =>
    new sdk.S3Client({ maxAttempts: 3, requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 } }),
);

function s3Failure(error: unknown, what: string): never {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  if ((e.$metadata?.httpStatusCode ?? 0) >= 500 || e.name === 'TimeoutError' || e.name === 'SlowDown') {
    throw new UnavailableError('datasource_unavailable', 'The raster store is temporarily unavailable.');
  }
  throw unreadable(what, e.name ?? 'refused');
}

/**
 * `s3://bucket/prefix` (AWS): ranged GetObject per header read, ListObjectsV2 for patterns. Not
 * exercised by the local tests (no S3 here); the Lambda role needs s3:GetObject and s3:ListBucket.
 */
export function s3Root(rootUri: string): RootStore {
  const [, bucket = '', prefix = ''] = /^s3:\/\/([^/]+)\/?(.*)$/.exec(normaliseRoot(rootUri)) ?? [];
  const keyPrefix = prefix ? `${prefix}/` : '';
  return {
    async checkRoot() {
      if (!bucket) return 'expected s3://bucket/prefix';
      const { sdk, client } = await s3Client();
      try {
        await client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, MaxKeys: 1 }));
        return undefined;
      } catch (error) {
        return (error as { name?: string }).name ?? 'unreadable';
      }
    },
    async list(pattern) {
      const { sdk, client } = await s3Client();
      const out: string[] = [];
      let token: string | undefined;
      do {
        let page: ListObjectsV2CommandOutput;
        try {
          page = await client.send(
            new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, ContinuationToken: token }),
          );
        } catch (error) {
          s3Failure(error, rootUri);
        }
        for (const o of page.Contents ?? []) {
          const rel = (o.Key ?? '').slice(keyPrefix.length);
          if (rel && pattern.test(rel)) out.push(rel);
        }
        token = page.NextContinuationToken;
      } while (token && out.length < MAX_LISTED);
      return out.sort();
    },
    async open(relativePath) {
      const Key = `${keyPrefix}${relativePath}`;
      return {
        async read(offset, length) {
          const { sdk, client } = await s3Client();
          try {
            const res = await client.send(
              new sdk.GetObjectCommand({
                Bucket: bucket,
                Key,
                Range: `bytes=${offset}-${offset + length - 1}`,
              }),
            );
            return (await res.Body?.transformToByteArray()) ?? new Uint8Array();
          } catch (error) {
            if ((error as { name?: string }).name === 'InvalidRange') return new Uint8Array();
            s3Failure(error, relativePath);
          }
        },
        close: async () => {},
      };
    },
  };
}

/** The store of a root: `s3://` → S3, anything else → a local directory. */
export function rootStore(rootUri: string): RootStore {
  return rootUri.startsWith('s3://') ? s3Root(rootUri) : localRoot(rootUri);
}

/** Root checks alone (createService/updateService), without the GeoTIFF parser in the bundle. */
export const rasterRoots = { checkRoot: (rootUri: string) => rootStore(rootUri).checkRoot() };
