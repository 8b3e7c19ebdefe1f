import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { readFeatures } from '#datasources/imports/formats/index.ts';
import { tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Writes `count` lines from `line(i)` between `head` and `tail` to a temp file; returns its path. */
async function writeLarge(
  name: string,
  head: string,
  count: number,
  line: (i: number) => string,
  tail: string,
) {
  const path = `${tmp.dir}/${name}`;
  const out = createWriteStream(path);
  out.write(head);
  let batch = '';
  for (let i = 0; i < count; i++) {
    batch += line(i);
    if (batch.length > 1 << 20) {
      if (!out.write(batch)) await once(out, 'drain');
      batch = '';
    }
  }
  out.write(batch + tail);
  out.end();
  await once(out, 'finish');
  return path;
}

/** Reads every feature, sampling RSS; returns the count, the peak RSS growth and features/s. */
async function measure(path: string, filename: string, layer: string) {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  let count = 0;
  let lastX = -1;
  const start = performance.now();
  for await (const f of readFeatures(path, filename, layer)) {
    count++;
    const geometry = f.geometry as { coordinates: number[] };
    lastX = geometry.coordinates[0] as number;
    if (count % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const seconds = (performance.now() - start) / 1000;
  return { count, lastX, growthMb: (peak - base) / 2 ** 20, perSecond: Math.round(count / seconds) };
}

const props = (i: number) => `{"id":${i},"name":"feature number ${i}","value":${(i * 0.37).toFixed(3)}}`;

describe('memory stays flat on large files', () => {
  it('streams a ~60 MB GeoJSON FeatureCollection', async () => {
    const n = 480_000;
    const path = await writeLarge(
      'big.geojson',
      '{"type":"FeatureCollection","features":[\n',
      n,
      (i) =>
        `${i ? ',' : ''}{"type":"Feature","properties":${props(i)},"geometry":{"type":"Point","coordinates":[${(i % 360) - 180 + 0.5},${(i % 170) - 85}]}}\n`,
      ']}\n',
    );
    const result = await measure(path, 'big.geojson', 'big');
    console.log(`GeoJSON 60 MB: ${result.perSecond} features/s, RSS growth ${result.growthMb.toFixed(1)} MB`);
    expect(result.count).toBe(n);
    expect(result.lastX).toBe(((n - 1) % 360) - 180 + 0.5);
    expect(result.growthMb).toBeLessThan(150);
  }, 300_000);

  it('streams a large NDJSON file', async () => {
    const n = 250_000;
    const path = await writeLarge(
      'big.ndjson',
      '',
      n,
      (i) =>
        `{"type":"Feature","properties":${props(i)},"geometry":{"type":"Point","coordinates":[${i % 180},${i % 90}]}}\n`,
      '',
    );
    const result = await measure(path, 'big.ndjson', 'big');
    console.log(`NDJSON: ${result.perSecond} features/s, RSS growth ${result.growthMb.toFixed(1)} MB`);
    expect(result.count).toBe(n);
    expect(result.growthMb).toBeLessThan(150);
  }, 300_000);

  it('streams a large CSV file', async () => {
    const n = 300_000;
    const path = await writeLarge(
      'big.csv',
      'id,name,lat,lon\n',
      n,
      (i) => `${i},"row ${i}",${i % 90},${i % 180}\n`,
      '',
    );
    const result = await measure(path, 'big.csv', 'big');
    console.log(`CSV: ${result.perSecond} features/s, RSS growth ${result.growthMb.toFixed(1)} MB`);
    expect(result.count).toBe(n);
    expect(result.growthMb).toBeLessThan(150);
  }, 300_000);
});
