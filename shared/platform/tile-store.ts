/**
 * The tile stores of the persistent tile cache (ADR 0139): an S3 prefix on AWS, a directory under
 * the data dir locally. Both keep a tile's MVT bytes with what rendering it reported (features,
 * truncated): S3 as object metadata, the directory as a one-line header before the bytes. A new
 * tile is stored only when none is there (S3's conditional write, a hard link locally), so a tile
 * two requests render at once is counted once.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { CachedTile, StoredTile, TileStore } from '#domain/tile-cache.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

/** A key is ours only when it is a relative path of plain segments (never `..`, never absolute). */
function checkedKey(key: string): string {
  if (
    !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/.test(key) ||
    key.split('/').some((s) => s === '..' || s === '.')
  )
    throw new Error(`Not a tile store key: '${key.slice(0, 200)}'.`);
  return key;
}

/** The local file's header: the tile's facts as JSON, padded to a fixed width (so a size is a stat). */
const HEADER_BYTES = 32;

function header(tile: CachedTile): Buffer {
  return Buffer.from(`${JSON.stringify({ f: tile.features, t: tile.truncated }).padEnd(HEADER_BYTES - 1)}\n`);
}

/** Segment-wise order of keys (the order a directory walk lists them in). */
function compareSegments(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The local tile store: `<root>/<key>`, each file a JSON header line and the tile's bytes. */
export class DirectoryTileStore implements TileStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    return join(this.root, checkedKey(key));
  }

  async get(key: string): Promise<CachedTile | undefined> {
    let raw: Buffer;
    try {
      raw = await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    if (raw.byteLength < HEADER_BYTES) return undefined;
    const meta = JSON.parse(raw.subarray(0, HEADER_BYTES).toString('utf8')) as { f: number; t: boolean };
    const body = raw.subarray(HEADER_BYTES);
    return {
      bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
      features: meta.f,
      truncated: meta.t,
    };
  }

  /** Writes a temporary file beside the tile; `commit` moves it into place. */
  private async staged<T>(key: string, tile: CachedTile, commit: (temp: string, path: string) => Promise<T>) {
    const path = this.path(key);
    const temp = `${path}.${randomUUID()}.tmp`;
    // A truncate may remove the directory the moment it empties: make it again and retry.
    for (let attempt = 0; ; attempt++) {
      await mkdir(dirname(path), { recursive: true });
      try {
        await writeFile(temp, Buffer.concat([header(tile), tile.bytes]));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw error;
      }
    }
    try {
      return await commit(temp, path);
    } finally {
      await rm(temp, { force: true });
    }
  }

  putNew(key: string, tile: CachedTile): Promise<boolean> {
    return this.staged(key, tile, async (temp, path) => {
      try {
        await link(temp, path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      }
    });
  }

  replace(key: string, tile: CachedTile): Promise<number | undefined> {
    return this.staged(key, tile, async (temp, path) => {
      const before = await this.size(path);
      await rename(temp, path);
      return before;
    });
  }

  private async size(path: string): Promise<number | undefined> {
    try {
      return Math.max(0, (await stat(path)).size - HEADER_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async list(prefix: string, after: string | undefined, limit: number) {
    const base = checkedKey(prefix).replace(/\/$/, '');
    const afterParts = after ? checkedKey(after).split('/') : undefined;
    const tiles: StoredTile[] = [];
    const walk = async (rel: string[], bound: readonly string[] | undefined): Promise<boolean> => {
      let names: string[];
      try {
        names = (await readdir(join(this.root, ...rel), { withFileTypes: true }))
          .filter((d) => !d.name.endsWith('.tmp'))
          .map((d) => (d.isDirectory() ? `${d.name}/` : d.name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
        throw error;
      }
      names.sort((a, b) => (a.replace(/\/$/, '') < b.replace(/\/$/, '') ? -1 : 1));
      for (const entry of names) {
        const name = entry.replace(/\/$/, '');
        const parts = [...rel, name];
        let nextBound: readonly string[] | undefined;
        if (bound) {
          const cmp = compareSegments(parts, bound.slice(0, parts.length));
          if (cmp < 0) continue;
          if (cmp === 0) {
            if (!entry.endsWith('/')) continue; // the key `after` itself
            nextBound = bound;
          }
        }
        if (entry.endsWith('/')) {
          if (!(await walk(parts, nextBound))) return false;
        } else {
          const body = await this.size(join(this.root, ...parts));
          if (body !== undefined) tiles.push({ key: parts.join('/'), bytes: body });
          if (tiles.length >= limit) return false;
        }
      }
      return true;
    };
    const complete = await walk(base.split('/'), afterParts);
    return complete ? { tiles } : { tiles, next: (tiles.at(-1) as StoredTile).key };
  }

  async children(prefix: string, limit: number): Promise<string[]> {
    const dir = prefix ? join(this.root, checkedKey(prefix)) : this.root;
    try {
      return (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
        .slice(0, limit);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    await Promise.all(
      keys.map(async (key) => {
        try {
          await unlink(this.path(key));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }),
    );
    // Directories left empty go too (as an S3 prefix does), so a gone workspace leaves no trace.
    const parents = new Set(
      keys.flatMap((k) =>
        k
          .split('/')
          .slice(0, -1)
          .map((_, i, a) => a.slice(0, a.length - i).join('/')),
      ),
    );
    for (const dir of [...parents].sort((a, b) => b.length - a.length)) {
      try {
        await rmdir(join(this.root, dir));
      } catch {
        // Not empty (or gone already): it stays.
      }
    }
  }
}

const notFound = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound');

/** The AWS tile store: objects `<prefix><key>` of one bucket, tile facts as metadata. */
export class S3TileStore implements TileStore {
  constructor(
    private readonly bucket: string,
    private readonly prefix = 'tiles/',
    private readonly s3: Pick<S3Client, 'send'> = awsClient(new S3Client({})),
  ) {}

  private key(key: string): string {
    return `${this.prefix}${checkedKey(key)}`;
  }

  async get(key: string): Promise<CachedTile | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      const bytes = (await out.Body?.transformToByteArray()) ?? new Uint8Array();
      return {
        bytes,
        features: Number(out.Metadata?.features ?? 0),
        truncated: out.Metadata?.truncated === 'true',
      };
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  private put(key: string, tile: CachedTile, ifNoneMatch: boolean) {
    return this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(key),
        Body: tile.bytes,
        ContentType: 'application/vnd.mapbox-vector-tile',
        Metadata: { features: String(tile.features), truncated: String(tile.truncated) },
        ...(ifNoneMatch ? { IfNoneMatch: '*' } : {}),
      }),
    );
  }

  async putNew(key: string, tile: CachedTile): Promise<boolean> {
    try {
      await this.put(key, tile, true);
      return true;
    } catch (error) {
      // 412: the object exists (S3 conditional writes); 409: a concurrent conditional write won.
      if (
        error instanceof S3ServiceException &&
        (error.$metadata.httpStatusCode === 412 || error.$metadata.httpStatusCode === 409)
      )
        return false;
      throw error;
    }
  }

  async replace(key: string, tile: CachedTile): Promise<number | undefined> {
    let before: number | undefined;
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      before = head.ContentLength;
    } catch (error) {
      if (!notFound(error)) throw error;
    }
    await this.put(key, tile, false);
    return before;
  }

  async list(prefix: string, after: string | undefined, limit: number) {
    const out = await this.s3.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: this.key(prefix),
        ...(after ? { StartAfter: this.key(after) } : {}),
        MaxKeys: Math.min(limit, 1000),
      }),
    );
    const tiles = (out.Contents ?? []).map((o) => ({
      key: (o.Key as string).slice(this.prefix.length),
      bytes: o.Size ?? 0,
    }));
    return out.IsTruncated && tiles.length > 0
      ? { tiles, next: (tiles.at(-1) as StoredTile).key }
      : { tiles };
  }

  async children(prefix: string, limit: number): Promise<string[]> {
    const base = `${this.prefix}${prefix ? checkedKey(prefix) : ''}`;
    const out = await this.s3.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: base,
        Delimiter: '/',
        MaxKeys: Math.min(limit, 1000),
      }),
    );
    return (out.CommonPrefixes ?? []).map((p) => (p.Prefix as string).slice(base.length).replace(/\/$/, ''));
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((k) => ({ Key: this.key(k) })), Quiet: true },
        }),
      );
    }
  }
}
