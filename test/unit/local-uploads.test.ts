import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfiguredUriPolicy,
  releaseSourceFile,
  STALE_COPY_MS,
  sourceFile,
} from '#datasources/imports/sources.ts';
import { UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import { expireUploads, handleUpload, LOCAL_UPLOAD_EXPIRY_DAYS } from '#infra/local/uploads.ts';
import { LocalUploads, localUploadPath, S3Uploads, verifyLocalUpload } from '#platform/import-uploads.ts';
import { formBody } from '../support/imports.ts';

const WS = '0b8f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
const IMPORT = '01890f2e-7b6a-7c5d-8e4f-3a2b1c0d9e8f';
const KEY = `uploads/${WS}/${IMPORT}`;
const secret = Buffer.alloc(32, 7);

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Every file under `dir`, relative. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe('local upload keys: ids, never a name that walks or overflows a path (ADR 0106)', () => {
  const signed = async (key: string) =>
    (await new LocalUploads(secret, 'http://x', '/tmp/x').ticket(key, 10, new Date(Date.now() + 60_000)))
      .fields;

  it.each([
    ['a dot segment', `uploads/${WS}/.`],
    ['a dot-dot segment', `uploads/${WS}/..`],
    ['three dots', `uploads/${WS}/...`],
    ['a hidden name', `uploads/${WS}/.geojson`],
    ['a segment past 128 characters', `uploads/${WS}/${'x'.repeat(129)}`],
    ['more than four segments', 'uploads/a/b/c/d/e'],
    ['another prefix', `other/${WS}/${IMPORT}`],
  ])('refuses a signed key with %s', async (_what, key) => {
    expect(verifyLocalUpload(secret, await signed(key))).toEqual({ refused: 'Invalid key.' });
    expect(() => localUploadPath('/tmp/x', key)).toThrow();
  });

  it('takes the keys the domain makes, and sealed locations of them', async () => {
    expect(verifyLocalUpload(secret, await signed(KEY))).toEqual({ key: KEY, maxBytes: 10 });
    expect(localUploadPath('/tmp/x', KEY)).toBe(`/tmp/x/${KEY}`);
    const sealed = `sealed/${KEY}/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f`;
    expect(localUploadPath('/tmp/x', sealed)).toBe(`/tmp/x/${sealed}`);
    expect(() => localUploadPath('/tmp/x', `sealed/${KEY}/../../../../etc`)).toThrow();
  });
});

describe('the local upload store (the S3 presigned-POST stand-in)', () => {
  let dir = '';
  let server: Server;
  let url = '';
  const settled: string[] = [];

  beforeAll(async () => {
    dir = tempDir('geoplane-store-');
    server = createServer((req, res) => {
      handleUpload(req, res, { secret, dir }).then(
        () => settled.push('resolved'),
        () => settled.push('rejected'),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/local-uploads`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  function post(fields: Record<string, string>, file: Buffer): Promise<{ status: number; text: string }> {
    const { body, contentType } = formBody(fields, file, 'f.geojson');
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { 'Content-Type': contentType } }, (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('keeps what was uploaded when the import started: a later POST changes only the form’s object', async () => {
    const uploads = new LocalUploads(secret, url, dir);
    const { fields } = await uploads.ticket(KEY, 1000, new Date(Date.now() + 60_000));
    expect((await post(fields, Buffer.from('first'))).status).toBe(204);
    const sealed = await uploads.seal(KEY);
    expect(sealed).toEqual({
      size: 5,
      location: expect.stringMatching(/^sealed\//),
      etag: expect.any(String),
    });
    expect((await post(fields, Buffer.from('second, longer'))).status).toBe(204);
    const location = sealed?.location as string;
    expect(readFileSync(localUploadPath(dir, location), 'utf8')).toBe('first');
    expect(readFileSync(localUploadPath(dir, KEY), 'utf8')).toBe('second, longer');
    // Each start seals under a name of its own.
    expect((await uploads.seal(KEY))?.location).not.toBe(location);
    // No transfer file is left, and every name in the store is the server's.
    expect(files(dir).every((f) => /^(sealed\/)?uploads\/[0-9a-f/-]+$/.test(f))).toBe(true);

    await uploads.remove(location);
    expect(files(dir)).toEqual([]);
    expect(await uploads.seal(KEY)).toBeUndefined();
  });

  it('answers 500 when the store can’t be written, keeps nothing and never rejects', async () => {
    const uploads = new LocalUploads(secret, url, dir);
    const key = `uploads/${WS}/1a2b3c4d-0000-4000-8000-000000000001`;
    const { fields } = await uploads.ticket(key, 1000, new Date(Date.now() + 60_000));
    // A file where the transfers' directory should be.
    rmSync(join(dir, 'incoming'), { recursive: true, force: true });
    writeFileSync(join(dir, 'incoming'), 'x');
    settled.length = 0;
    try {
      const res = await post(fields, Buffer.from('{}'));
      expect(res.status).toBe(500);
      expect(res.text).toMatch(/InternalError/);
    } finally {
      rmSync(join(dir, 'incoming'));
    }
    await expect.poll(() => settled).toEqual(['resolved']);
    expect(await uploads.size(key)).toBeUndefined();
  });

  it('writes the store’s files for its owner only', async () => {
    const uploads = new LocalUploads(secret, url, dir);
    const key = `uploads/${WS}/1a2b3c4d-0000-4000-8000-000000000002`;
    const { fields } = await uploads.ticket(key, 1000, new Date(Date.now() + 60_000));
    expect((await post(fields, Buffer.from('{}'))).status).toBe(204);
    const sealed = (await uploads.seal(key))?.location as string;
    for (const path of [key, sealed]) expect(statSync(localUploadPath(dir, path)).mode & 0o077).toBe(0);
    expect(statSync(join(dir, 'uploads', WS)).mode & 0o077).toBe(0);
    await uploads.remove(key);
  });
});

describe('upload expiry, as the upload bucket’s lifecycle rules (ADR 0106)', () => {
  it('keeps uploads as many days as the deployed rule (cdk.json importUploadExpiryDays)', () => {
    const cdk = JSON.parse(readFileSync(join(import.meta.dirname, '../../cdk.json'), 'utf8'));
    expect(stageConfigOf(new App({ context: cdk.context }).node).importUploadExpiryDays).toBe(
      LOCAL_UPLOAD_EXPIRY_DAYS,
    );
  });

  it('removes uploads and seals older than the expiry, transfers older than a day, then empty folders', async () => {
    const dir = tempDir('geoplane-expiry-');
    const now = new Date();
    const ago = (days: number) => new Date(now.getTime() - days * 24 * 3600_000);
    const put = (path: string, at: Date) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), 'x');
      utimesSync(join(dir, path), at, at);
    };
    put(`uploads/${WS}/old`, ago(8));
    put(`uploads/${WS}/fresh`, ago(6));
    put(`sealed/uploads/${WS}/old/seal`, ago(8));
    put('incoming/cut', ago(2));
    put('incoming/running', ago(0.5));
    const emptyOld = join(dir, 'uploads', 'gone');
    mkdirSync(emptyOld);
    utimesSync(emptyOld, ago(2), ago(2));
    for (const d of [`sealed/uploads/${WS}/old`, `sealed/uploads/${WS}`, 'sealed/uploads'])
      utimesSync(join(dir, d), ago(2), ago(2));

    expect(await expireUploads(dir, now)).toEqual({ uploads: 2, incomplete: 1 });
    expect(files(dir)).toEqual(['incoming/running', `uploads/${WS}/fresh`]);
    expect(existsSync(emptyOld)).toBe(false);
    // A folder just emptied stays for an hour (an upload may be about to land in it).
    expect(existsSync(join(dir, 'sealed', 'uploads', WS, 'old'))).toBe(true);
    expect(await expireUploads(dir, new Date(now.getTime() + 2 * 3600_000))).toEqual({
      uploads: 0,
      incomplete: 0,
    });
    expect(existsSync(join(dir, 'sealed', 'uploads'))).toBe(false);
    expect(existsSync(join(dir, 'uploads', WS))).toBe(true);
  });
});

describe('import URIs tell nothing about the machine (ADR 0106)', () => {
  const saved = process.env.GEOPLANE_IMPORT_ROOT;
  afterEach(() => {
    if (saved === undefined) delete process.env.GEOPLANE_IMPORT_ROOT;
    else process.env.GEOPLANE_IMPORT_ROOT = saved;
  });

  it('answers the same for a file elsewhere, a missing one, a folder and a link out of the root', async () => {
    const base = tempDir('geoplane-uris-');
    const root = join(base, 'import-sources');
    mkdirSync(join(root, 'folder'), { recursive: true });
    writeFileSync(join(base, 'secret.key'), 'k');
    writeFileSync(join(root, 'ok.geojson'), '{}');
    symlinkSync(join(base, 'secret.key'), join(root, 'link.geojson'));
    process.env.GEOPLANE_IMPORT_ROOT = root;
    const policy = new ConfiguredUriPolicy();
    const answers = new Set<string>();
    for (const uri of [
      join(base, 'secret.key'),
      join(base, 'missing.key'),
      `${root}/../secret.key`,
      `file://${join(base, 'secret.key')}`,
      join(root, 'missing.geojson'),
      join(root, 'folder'),
      join(root, 'link.geojson'),
      'relative/path.geojson',
    ]) {
      const error = await policy.admit(uri).then(
        () => undefined,
        (e: { reason?: string; message: string }) => e,
      );
      answers.add(`${error?.reason} ${error?.message.split(uri).join('<uri>')}`);
    }
    expect([...answers]).toHaveLength(1);
    expect([...answers][0]).toMatch(/^uri_not_allowed /);
    expect([...answers][0]).not.toContain(base);
    expect(await policy.admit(join(root, 'ok.geojson'))).toBe(join(root, 'ok.geojson'));
  });
});

describe('uploads on S3: sealed by ETag at the start (ADR 0106)', () => {
  type Sent = { input: Record<string, unknown>; constructor: { name: string } };
  const client = (answer: (command: Sent) => unknown) => ({
    sent: [] as Sent[],
    async send(command: Sent) {
      this.sent.push(command);
      return answer(command);
    },
  });
  const failing = (name: string) => () => {
    throw Object.assign(new Error(name), { name });
  };

  it('seals an upload as its size and ETag; nothing uploaded is undefined; an outage is a 503', async () => {
    const s3 = client(() => ({ ContentLength: 42, ETag: '"abc"' }));
    expect(await new S3Uploads('bucket', s3 as never).seal(KEY)).toEqual({
      size: 42,
      location: KEY,
      etag: '"abc"',
    });
    expect(s3.sent[0]?.input).toEqual({ Bucket: 'bucket', Key: KEY });
    expect(await new S3Uploads('bucket', client(failing('NotFound')) as never).seal(KEY)).toBeUndefined();
    await expect(
      new S3Uploads('bucket', client(failing('InternalError')) as never).seal(KEY),
    ).rejects.toThrow(UnavailableError);
  });

  describe('the workflow reads exactly the sealed object', () => {
    const savedBucket = process.env.IMPORT_UPLOAD_BUCKET;
    const job = { id: 'b1c2d3e4-0000-4000-8000-00000000000a', source_kind: 'upload' as const };
    beforeAll(() => {
      process.env.IMPORT_UPLOAD_BUCKET = 'bucket';
    });
    afterAll(async () => {
      if (savedBucket === undefined) delete process.env.IMPORT_UPLOAD_BUCKET;
      else process.env.IMPORT_UPLOAD_BUCKET = savedBucket;
      await releaseSourceFile(job.id);
    });

    it('fails the import when the object was replaced after the start (412)', async () => {
      const s3 = client(failing('PreconditionFailed'));
      const read = sourceFile({ ...job, source_location: KEY, source_etag: '"abc"' }, { s3: s3 as never });
      await expect(read).rejects.toThrow(ImportInputError);
      await expect(read).rejects.toMatchObject({ code: 'upload_changed' });
      expect(s3.sent[0]?.input).toEqual({ Bucket: 'bucket', Key: KEY, IfMatch: '"abc"' });
    });

    it('downloads it with If-Match on its ETag', async () => {
      const { Readable } = await import('node:stream');
      const s3 = client(() => ({ Body: Readable.from([Buffer.from('{}')]) }));
      const path = await sourceFile(
        { ...job, source_location: KEY, source_etag: '"abc"' },
        { s3: s3 as never },
      );
      expect(readFileSync(path, 'utf8')).toBe('{}');
      expect(s3.sent[0]?.input).toMatchObject({ IfMatch: '"abc"' });
    });

    it("sweeps other imports' copies idle for STALE_COPY_MS, keeps its own as used, and releases it", async () => {
      const { Readable } = await import('node:stream');
      const savedTmp = process.env.TMPDIR;
      process.env.TMPDIR = tempDir('geoplane-copies-');
      try {
        const copies = join(tmpdir(), 'geoplane-imports');
        const idle = (ms: number) => new Date(Date.now() - ms);
        const copy = (id: string, idleMs: number) => {
          mkdirSync(join(copies, id), { recursive: true });
          writeFileSync(join(copies, id, 'source'), id);
          utimesSync(join(copies, id), idle(idleMs), idle(idleMs));
        };
        const other = '01890f2e-7b6a-7c5d-8e4f-00000000000b';
        const recent = '01890f2e-7b6a-7c5d-8e4f-00000000000c';
        copy(other, STALE_COPY_MS + 60_000);
        copy(recent, STALE_COPY_MS - 60_000);
        copy(job.id, STALE_COPY_MS + 60_000);
        mkdirSync(join(copies, 'not-an-import'));
        utimesSync(join(copies, 'not-an-import'), idle(3 * STALE_COPY_MS), idle(3 * STALE_COPY_MS));
        const s3 = client(() => ({ Body: Readable.from([Buffer.from('new')]) }));
        const path = await sourceFile(
          { ...job, source_location: KEY, source_etag: '"abc"' },
          { s3: s3 as never },
        );
        // Its own copy was there: reused (no download), and marked as used now.
        expect(readFileSync(path, 'utf8')).toBe(job.id);
        expect(s3.sent).toHaveLength(0);
        expect(Date.now() - statSync(join(copies, job.id)).mtimeMs).toBeLessThan(60_000);
        expect(readdirSync(copies).sort()).toEqual([job.id, recent, 'not-an-import'].sort());
        await releaseSourceFile(job.id);
        expect(readdirSync(copies).sort()).toEqual([recent, 'not-an-import'].sort());
        // Gone: the next acquisition downloads it again.
        expect(
          readFileSync(await sourceFile({ ...job, source_location: KEY }, { s3: s3 as never }), 'utf8'),
        ).toBe('new');
        expect(s3.sent).toHaveLength(1);
      } finally {
        await releaseSourceFile(job.id);
        if (savedTmp === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = savedTmp;
      }
    });
  });
});
