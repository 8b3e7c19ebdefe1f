/**
 * The imports section's input files: generated with a seeded PRNG (the same files every run) and
 * written in batches, never the whole text in memory: FeatureCollections, CSV rows, GeoJSONSeq lines.
 */
import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** mulberry32: a small seeded PRNG, so every run loads the same files. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['north', 'river', 'old', 'mill', 'green', 'station', 'hill', 'bay', 'market', 'park'];

/** Writes a FeatureCollection of `count` features, `feature(i)` each, in batches (never the whole text in memory). */
export async function writeCollection(
  path: string,
  count: number,
  feature: (i: number) => string,
): Promise<number> {
  const file = await open(path, 'w');
  try {
    await file.write('{"type":"FeatureCollection","features":[\n');
    const BATCH = 2_000;
    for (let i = 0; i < count; i += BATCH) {
      const parts: string[] = [];
      for (let j = i; j < Math.min(count, i + BATCH); j++) parts.push(feature(j));
      await file.write(`${i > 0 ? ',\n' : ''}${parts.join(',\n')}`);
    }
    await file.write('\n]}\n');
  } finally {
    await file.close();
  }
  return statSync(path).size;
}

/** Writes `count` lines, `line(i)` each, in batches; a header line first when given. */
export async function writeLines(
  path: string,
  count: number,
  line: (i: number) => string,
  header?: string,
): Promise<number> {
  const file = await open(path, 'w');
  try {
    if (header !== undefined) await file.write(`${header}\n`);
    const BATCH = 2_000;
    for (let i = 0; i < count; i += BATCH) {
      const parts: string[] = [];
      for (let j = i; j < Math.min(count, i + BATCH); j++) parts.push(line(j));
      await file.write(`${parts.join('\n')}\n`);
    }
  } finally {
    await file.close();
  }
  return statSync(path).size;
}

/** The point features' values (one draw per call, in the same order for every format). */
function pointValues(random: () => number, i: number) {
  const lon = (random() * 360 - 180).toFixed(6);
  const lat = (random() * 170 - 85).toFixed(6);
  const score = (random() * 10_000).toFixed(3);
  const name = `${WORDS[i % WORDS.length]} ${WORDS[Math.floor(random() * WORDS.length)]} ${i}`;
  return { lon, lat, score, name, active: random() < 0.5 };
}

/** The points as CSV rows: id,score,name,active,lon,lat (lon/lat found by their names). */
export function pointRow(random: () => number): (i: number) => string {
  return (i) => {
    const v = pointValues(random, i);
    return `${i},${v.score},${v.name},${v.active},${v.lon},${v.lat}`;
  };
}

export function pointFeature(random: () => number): (i: number) => string {
  return (i) => {
    const { lon, lat, score, name, active } = pointValues(random, i);
    return (
      `{"type":"Feature","properties":{"id":${i},"score":${score},"name":"${name}","active":${active}},` +
      `"geometry":{"type":"Point","coordinates":[${lon},${lat}]}}`
    );
  };
}

export function polygonFeature(random: () => number): (i: number) => string {
  return (i) => {
    const cx = random() * 340 - 170;
    const cy = random() * 160 - 80;
    const r = 0.0005 + random() * 0.005;
    const sides = random() < 0.5 ? 4 : 5;
    const turn = random() * Math.PI;
    const ring: string[] = [];
    // Counter-clockwise (the exterior ring of RFC 7946), closed.
    for (let k = 0; k <= sides; k++) {
      const a = turn + ((k % sides) * 2 * Math.PI) / sides;
      ring.push(`[${(cx + r * Math.cos(a)).toFixed(6)},${(cy + r * Math.sin(a)).toFixed(6)}]`);
    }
    return (
      `{"type":"Feature","properties":{"id":${i},"kind":"${sides === 4 ? 'square' : 'pentagon'}"},` +
      `"geometry":{"type":"Polygon","coordinates":[[${ring.join(',')}]]}}`
    );
  };
}
