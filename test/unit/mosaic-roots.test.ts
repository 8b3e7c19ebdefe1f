import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError, RuleViolationError } from '#domain/errors.ts';
import { localRootPath } from '#domain/mosaics.ts';

// ADR 0074: local mosaic roots lie under the configured mosaic directory, as written and once
// symlinks are resolved; only plain absolute paths are read.
const sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'geoplane-roots-')));
const mosaics = join(sandbox, 'mosaics');
const secrets = join(sandbox, 'data');
let localRoot: typeof import('#datasources/geotiff-readers.ts').localRoot;

beforeAll(async () => {
  mkdirSync(join(mosaics, 'a', 'sub'), { recursive: true });
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, 'issuer-key.json'), '{}');
  writeFileSync(join(mosaics, 'a', 'x.tif'), 'not a tiff');
  symlinkSync(secrets, join(mosaics, 'to-data'));
  symlinkSync(join(secrets, 'issuer-key.json'), join(mosaics, 'a', 'key.tif'));
  // The configuration is read once, on first use, in this worker.
  process.env.GEOPLANE_MOSAIC_ROOT = mosaics;
  ({ localRoot } = await import('#datasources/geotiff-readers.ts'));
});

afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

describe('localRootPath', () => {
  it.each([
    ['/data/rasters', '/data/rasters'],
    ['/data/rasters/', '/data/rasters'],
    ['file:///data/rasters', '/data/rasters'],
    ['/data//rasters', '/data/rasters'],
  ])('reads %s as %s', (uri, path) => {
    expect(localRootPath(uri)).toEqual({ path });
  });

  it.each([
    'relative/dir',
    'file://host/data',
    'FILE:///data',
    'http://x/data',
    '/data/../etc',
    '/data/./rasters',
    '/data/..',
    '/data/%2e%2e/etc',
    '/data/%2fetc',
    '/data\\..\\etc',
    '/data/\u0000x',
    '/data/\nx',
  ])('refuses %j', (uri) => {
    expect(localRootPath(uri)).toHaveProperty('refused');
  });
});

describe('localRoot confined under GEOPLANE_MOSAIC_ROOT', () => {
  const checkRoot = (uri: string) => localRoot(uri).checkRoot();
  const refusedAsInput = (e: unknown) => e instanceof InvalidInputError && e.reason === 'root_not_allowed';
  const refusedAsStored = (e: unknown) => e instanceof RuleViolationError && e.reason === 'root_not_allowed';

  it('accepts the mosaic directory and what lies under it', async () => {
    expect(await checkRoot(mosaics)).toBeUndefined();
    expect(await checkRoot(join(mosaics, 'a'))).toBeUndefined();
    expect(await checkRoot(`file://${join(mosaics, 'a', 'sub')}/`)).toBeUndefined();
    expect(await checkRoot(join(mosaics, 'missing'))).toBe('ENOENT');
  });

  it.each([
    () => secrets,
    () => sandbox,
    () => '/',
    () => '/etc',
    () => `${mosaics}-evil`,
    () => join(mosaics, 'to-data'),
    () => `${mosaics}/a/../../data`,
    () => `${mosaics}/%2e%2e/data`,
  ])('refuses a root outside it (400 root_not_allowed) — case %#', async (root) => {
    await expect(checkRoot(root())).rejects.toSatisfy(refusedAsInput);
  });

  it('does not list or read a stored root that leads outside (422), nor follow a file link out', async () => {
    const stored = localRoot(join(mosaics, 'to-data'));
    await expect(stored.list(/.*/)).rejects.toSatisfy(refusedAsStored);
    await expect(stored.open('issuer-key.json')).rejects.toSatisfy(refusedAsStored);
    const inside = localRoot(join(mosaics, 'a'));
    expect(await inside.list(/.*/)).toEqual(['x.tif']);
    await expect(inside.open('key.tif')).rejects.toMatchObject({ reason: 'unreadable_source' });
  });
});
