import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures } from '#datasources/imports/formats/index.ts';
import type { SourceFeature } from '#domain/import-sources.ts';
import {
  type Generated,
  writeCsv,
  writeFlatGeobuf,
  writeGeoJson,
  writeGeoPackage,
  writeNdjson,
  writeShapefileZip,
} from '../fixtures/imports/generate.ts';
import { tempDir } from '../fixtures/imports/support.ts';

/**
 * No file holds up the caller's event loop (ADR 0107): discovering and reading each format's worst
 * case — many features and one huge one (a MultiPoint of 400 000 positions; 100 000 for CSV, whose
 * WKT is a string the caller must hold anyway) — the main thread never runs for more than
 * BLOCK_LIMIT_MS between two turns of its event loop. The target is 50 ms; the limit leaves room
 * for a garbage collection on a loaded machine.
 *
 * What counts is the main thread's own CPU time between two ticks of a 5 ms interval, read from
 * /proc (schedstat), so time the machine spends on other processes isn't blamed on the reader.
 * Where /proc has no schedstat, the wall-clock gap between ticks is used, with more room.
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const HAS_SCHEDSTAT = existsSync(SCHEDSTAT);
const BLOCK_LIMIT_MS = HAS_SCHEDSTAT ? 100 : 250;

/** The main thread's CPU time so far (ms), or the wall clock where /proc has no schedstat. */
const clock = (): number =>
  HAS_SCHEDSTAT ? Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6 : performance.now();

/** Runs `work` and returns its result with the longest time the main thread went without a tick. */
async function longestBlock<T>(work: () => Promise<T>): Promise<{ result: T; blockedMs: number }> {
  let last = clock();
  let longest = 0;
  const tick = setInterval(() => {
    const now = clock();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    longest = Math.max(longest, clock() - last);
    return { result, blockedMs: Math.round(longest) };
  } finally {
    clearInterval(tick);
  }
}

const COUNT = 20_000;
const HUGE = 400_000;

const cases: {
  format: string;
  file: string;
  huge: number;
  write: (path: string, spec: Generated) => unknown;
}[] = [
  { format: 'GeoJSON', file: 'worst.geojson', huge: HUGE, write: writeGeoJson },
  { format: 'NDJSON', file: 'worst.ndjson', huge: HUGE, write: writeNdjson },
  { format: 'CSV (WKT)', file: 'worst.csv', huge: 100_000, write: writeCsv },
  {
    format: 'zipped shapefile',
    file: 'worst.zip',
    huge: HUGE,
    write: (path, spec) => writeShapefileZip(path, 'worst', spec),
  },
  { format: 'FlatGeobuf', file: 'worst.fgb', huge: HUGE, write: writeFlatGeobuf },
  {
    format: 'GeoPackage',
    file: 'worst.gpkg',
    huge: HUGE,
    write: (path, spec) => writeGeoPackage(path, { name: 'worst', ...spec }),
  },
];

describe.each(cases)('$format: many features and one huge one', ({ file, huge, write }) => {
  const spec = { count: COUNT, huge };
  const path = join(tmp.dir, file);
  const middle = Math.floor(COUNT / 2);

  it(`discovers and reads without blocking the event loop for more than ${BLOCK_LIMIT_MS} ms`, async () => {
    await write(path, spec);

    const discovery = await longestBlock(() => discover(path, file));
    expect(discovery.result.layers[0]).toMatchObject({
      name: 'worst',
      feature_count: COUNT,
      geometry_type: 'MultiPoint',
    });
    expect(discovery.blockedMs, 'discovery blocked the event loop').toBeLessThan(BLOCK_LIMIT_MS);

    const read = await longestBlock(async () => {
      let count = 0;
      let big: SourceFeature | undefined;
      for await (const feature of readFeatures(path, file, 'worst')) {
        if (count === middle) big = feature;
        count++;
      }
      return { count, big };
    });
    console.log(
      `${file}: main thread ran at most ${discovery.blockedMs} ms (discovery), ${read.blockedMs} ms (read) between ticks`,
    );
    expect(read.result.count).toBe(COUNT);
    const geometry = read.result.big?.geometry as { wkb?: Uint8Array; wkt?: string } | null;
    // WKB (as read, or as the loader would write the GeoJSON), or the CSV's WKT as it is.
    if (geometry?.wkt !== undefined) expect(geometry.wkt).toMatch(/^MULTIPOINT/);
    else expect(geometry?.wkb?.byteLength).toBe(9 + 21 * huge);
    expect(read.blockedMs, 'reading blocked the event loop').toBeLessThan(BLOCK_LIMIT_MS);
  }, 240_000);
});

// The views of issue #22: each names a `rowid` column, so paging it `ORDER BY rowid LIMIT 1000`
// evaluated the whole view for every page, on the event loop.
describe('a GeoPackage whose gpkg_contents also lists views', () => {
  it('leaves out a 400-million-row cross join and an endless recursive CTE, and discovers its table without blocking', async () => {
    const path = writeGeoPackage(join(tmp.dir, 'views.gpkg'), {
      name: 'worst',
      count: COUNT,
      more: (db) => {
        db.exec(`
          CREATE VIEW crossed AS SELECT a.fid AS rowid, a.geom AS geom FROM worst a, worst b;
          CREATE VIEW endless AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
            SELECT i AS rowid, NULL AS geom FROM n;
          INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) VALUES
            ('crossed', 'features', 'crossed', 4326), ('endless', 'features', 'endless', 4326);
          INSERT INTO gpkg_geometry_columns VALUES ('crossed', 'geom', 'POINT', 4326, 0, 0),
            ('endless', 'geom', 'POINT', 4326, 0, 0);
        `);
      },
    });
    const discovery = await longestBlock(() => discover(path, 'views.gpkg'));
    expect(discovery.result.layers.map((l) => l.name)).toEqual(['worst']);
    expect(discovery.result.warnings.join('\n')).toMatch(/Layer 'crossed' is not imported: it is a view/);
    expect(discovery.result.warnings.join('\n')).toMatch(/Layer 'endless' is not imported: it is a view/);
    expect(discovery.blockedMs).toBeLessThan(BLOCK_LIMIT_MS);
  }, 120_000);
});
