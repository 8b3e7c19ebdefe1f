import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures } from '#datasources/imports/formats/index.ts';
import { writeGeoJson, writeGeoPackage, writeNdjson } from '../fixtures/imports/generate.ts';
import { collect, expectInputError, tempDir } from '../fixtures/imports/support.ts';

/**
 * The limits of the readers' thread (ADR 0107): a reader stuck in one step, a discovery that runs
 * too long and a reader over its heap are stopped as 'file_too_complex', and the next call works.
 * The huge feature (a MultiPoint of 1,200,000 positions, a 48 MB line) takes about a second of one
 * synchronous step to be parsed and become the WKB it crosses the thread boundary as, and well
 * over 64 MB of heap (its parsed coordinates alone).
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const huge = { count: 10, huge: 1_200_000 };
const small = { count: 10 };
const INDEX = join(import.meta.dirname, '../../shared/datasources/imports/formats/index.ts');

/** Runs a discovery of `path` in another process and kills it (SIGKILL) once the reader reports progress. */
async function killedMidDiscovery(path: string): Promise<number> {
  const script = join(tmp.dir, 'discover-then-die.mts');
  writeFileSync(
    script,
    `import { discover } from ${JSON.stringify(INDEX)};
     await discover(${JSON.stringify(path)}, 'big.gpkg', { onBytes: () => console.log('reading') });`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => resolve());
    child.on('exit', (code) => reject(new Error(`the discovery ended (${code}) before it was killed`)));
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('a process killed mid-read (kill -9)', () => {
  it('leaves no lock beside the GeoPackage, and the next process removes its scratch dir', async () => {
    const dir = join(tmp.dir, 'killed');
    mkdirSync(dir);
    const path = writeGeoPackage(join(dir, 'big.gpkg'), { count: 150_000 });
    const pid = await killedMidDiscovery(path);
    const left = readdirSync(tmpdir()).filter((n) => n.startsWith(`geoplane-read-${pid}-`));
    expect(left).toHaveLength(1);
    expect(readdirSync(dir)).toEqual(['big.gpkg']);
    expect((await discover(path, 'big.gpkg')).layers[0]?.feature_count).toBe(150_000);
    expect(existsSync(join(tmpdir(), left[0] as string))).toBe(false);
  }, 120_000);
});

describe('the readers’ thread', () => {
  it('stops a reader stuck in one step for longer than maxStepMs, and the next read works', async () => {
    const path = await writeNdjson(join(tmp.dir, 'stuck.ndjson'), huge);
    const started = performance.now();
    await expectInputError(
      () => collect(readFeatures(path, 'stuck.ndjson', 'stuck', { limits: { maxStepMs: 300 } })),
      'file_too_complex',
      /Reading stuck\.ndjson was stopped: one step of the reader ran for more than 0\.3 s without a break/,
    );
    expect(performance.now() - started).toBeLessThan(20_000);
    const fine = await writeNdjson(join(tmp.dir, 'fine.ndjson'), small);
    expect(
      await collect(readFeatures(fine, 'fine.ndjson', 'fine', { limits: { maxStepMs: 300 } })),
    ).toHaveLength(10);
  }, 60_000);

  it('stops a discovery that runs longer than maxDiscoveryMs', async () => {
    const path = await writeGeoJson(join(tmp.dir, 'slow.geojson'), { count: 200_000 });
    await expectInputError(
      () => discover(path, 'slow.geojson', { limits: { maxDiscoveryMs: 200 } }),
      'file_too_complex',
      /Discovering slow\.geojson took longer than 0\.2 s \(the limit\)/,
    );
  }, 60_000);

  it('stops a reader over readerHeapMb, which reads a small file fine', async () => {
    const limits = { readerHeapMb: 64 };
    const fine = await writeGeoJson(join(tmp.dir, 'fine.geojson'), small);
    expect(await collect(readFeatures(fine, 'fine.geojson', 'fine', { limits }))).toHaveLength(10);
    const path = await writeGeoJson(join(tmp.dir, 'greedy.geojson'), huge);
    await expectInputError(
      () => collect(readFeatures(path, 'greedy.geojson', 'greedy', { limits })),
      'file_too_complex',
      /needs more than 64 MB of memory/,
    );
  }, 60_000);

  it('refuses a layer with more fields than maxFields while scanning', async () => {
    const properties = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`p${i}`, i]));
    const path = join(tmp.dir, 'wide.geojson');
    writeFileSync(
      path,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [{ type: 'Feature', properties, geometry: { type: 'Point', coordinates: [1, 2] } }],
      }),
    );
    await expectInputError(
      () => discover(path, 'wide.geojson'),
      'too_many_fields',
      /Layer 'wide' has more than 1000 fields/,
    );
  });
});
