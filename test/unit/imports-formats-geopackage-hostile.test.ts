import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures } from '#datasources/imports/formats/index.ts';
import { registerLayer, writeGeoPackage } from '../fixtures/imports/generate.ts';
import { collect, expectInputError, tempDir } from '../fixtures/imports/support.ts';

/**
 * Hostile GeoPackages (issue #22, ADR 0107): only plain feature tables with an INTEGER PRIMARY KEY
 * are layers, read by key in bounded pages, from a file opened so that no lock lands beside it.
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** A GeoPackage in its own folder (so what appears beside it can be listed), with table `points` of `count` rows. */
const gpkg = (name: string, options: Parameters<typeof writeGeoPackage>[1] = {}) => {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  return writeGeoPackage(join(dir, `${name}.gpkg`), { count: 3, ...options });
};
const besides = (path: string) => readdirSync(join(path, '..')).sort();
/**
 * The readers' scratch dirs that hold a link to `path`. Other test files read at the same time:
 * their scratch dirs come and go while this one looks, and one gone meanwhile is not ours.
 */
const scratchOf = (path: string) =>
  readdirSync(tmpdir())
    .filter((n) => n.startsWith('geoplane-read-'))
    .filter((n) => {
      const dir = join(tmpdir(), n);
      try {
        return readdirSync(dir).some((sub) => {
          const link = join(dir, sub, 'source.gpkg');
          return existsSync(link) && readlinkSync(link) === path;
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    });

describe('GeoPackage layers GeoPlane leaves out, with a warning', () => {
  it.each([
    [
      'a view',
      'CREATE VIEW odd AS SELECT fid, geom FROM points',
      /Layer 'odd' is not imported: it is a view; GeoPlane imports only plain feature tables/,
    ],
    [
      'a recursive CTE view that never ends',
      'CREATE VIEW odd AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS fid, NULL AS geom FROM n',
      /Layer 'odd' is not imported: it is a view/,
    ],
    [
      'a virtual table',
      'CREATE VIRTUAL TABLE odd USING fts5(geom)',
      /Layer 'odd' is not imported: it is a virtual table/,
    ],
    [
      'a table without a primary key',
      'CREATE TABLE odd (geom BLOB, name TEXT)',
      /Layer 'odd' is not imported: it has no INTEGER PRIMARY KEY column/,
    ],
    [
      'a table keyed by text',
      'CREATE TABLE odd (code TEXT PRIMARY KEY, geom BLOB)',
      /Layer 'odd' is not imported: it has no INTEGER PRIMARY KEY column/,
    ],
    [
      'a WITHOUT ROWID table',
      'CREATE TABLE odd (fid INTEGER PRIMARY KEY, geom BLOB) WITHOUT ROWID',
      /Layer 'odd' is not imported: it is a WITHOUT ROWID table/,
    ],
    [
      'a name without a table',
      '',
      /Layer 'odd' is not imported: gpkg_contents lists it, but the GeoPackage has no table of that name/,
    ],
  ])('%s', async (_what, sql, warning) => {
    const path = gpkg(`odd-${_what.replaceAll(' ', '-')}`, {
      more: (db) => {
        if (sql) db.exec(sql);
        registerLayer(db, 'odd');
      },
    });
    const discovery = await discover(path, 'odd.gpkg');
    expect(discovery.layers.map((l) => l.name)).toEqual(['points']);
    expect(discovery.warnings.join('\n')).toMatch(warning);
    await expectInputError(() => collect(readFeatures(path, 'odd.gpkg', 'odd')), 'unknown_layer', warning);
  });

  it('refuses a GeoPackage whose only layer is a view, saying why', async () => {
    const path = gpkg('only-view', {
      count: undefined,
      more: (db) => {
        db.exec(
          'CREATE TABLE base (fid INTEGER PRIMARY KEY, geom BLOB); CREATE VIEW v AS SELECT * FROM base',
        );
        registerLayer(db, 'v');
      },
    });
    await expectInputError(
      () => discover(path, 'only-view.gpkg'),
      'no_features',
      /'v' is not imported: it is a view/,
    );
  });

  it('refuses metadata tables that are views', async () => {
    const path = gpkg('meta-view', {
      more: (db) => {
        db.exec(`
          ALTER TABLE gpkg_contents RENAME TO contents_data;
          CREATE VIEW gpkg_contents AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
            SELECT c.* FROM contents_data c, n;
        `);
      },
    });
    await expectInputError(
      () => discover(path, 'meta-view.gpkg'),
      'invalid_geopackage',
      /gpkg_contents is a view, not a table/,
    );
  });

  it('does not read a VIRTUAL generated column (its expression is the file’s), with a warning', async () => {
    const path = gpkg('generated', {
      more: (db) =>
        db.exec(
          "ALTER TABLE points ADD COLUMN heavy TEXT GENERATED ALWAYS AS (printf('%.*c', 900000000, 'x')) VIRTUAL",
        ),
    });
    const discovery = await discover(path, 'generated.gpkg');
    expect(discovery.layers[0]?.fields.map((f) => f.name)).toEqual(['name', 'value']);
    expect(discovery.warnings.join()).toMatch(/generated column 'heavy' is not imported/);
    const features = await collect(readFeatures(path, 'generated.gpkg', 'points'));
    expect(features).toHaveLength(3);
    expect(features[0]?.properties).not.toHaveProperty('heavy');
  });

  it('refuses more than 1000 layers', async () => {
    const path = gpkg('many-layers', {
      more: (db) =>
        db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001)
          INSERT INTO gpkg_contents (table_name, data_type) SELECT 'layer_' || i, 'features' FROM n`),
    });
    await expectInputError(() => discover(path, 'many.gpkg'), 'too_many_layers', /more than 1000/);
  });

  it('refuses a table wider than the field limit', async () => {
    const columns = Array.from({ length: 1200 }, (_, i) => `c${i} TEXT`).join(', ');
    const path = gpkg('wide', {
      count: undefined,
      more: (db) => {
        db.exec(`CREATE TABLE wide (fid INTEGER PRIMARY KEY, geom BLOB, ${columns})`);
        registerLayer(db, 'wide');
      },
    });
    await expectInputError(
      () => discover(path, 'wide.gpkg'),
      'too_many_fields',
      /Layer 'wide' has more than 1000 fields/,
    );
  });
});

describe('GeoPackage rows', () => {
  it('refuses a row over maxFeatureBytes before reading its values, naming the feature and key', async () => {
    const path = gpkg('big-row', {
      more: (db) => db.exec("UPDATE points SET name = printf('%.*c', 3000000, 'x') WHERE fid = 2"),
    });
    const limits = { maxFeatureBytes: 1024 ** 2 };
    await expectInputError(
      () => discover(path, 'big-row.gpkg', { limits }),
      'feature_too_large',
      /Feature 1 \(fid 2\) of layer 'points' holds 30000\d\d bytes, more than the limit of 1048576/,
    );
    await expectInputError(
      () => collect(readFeatures(path, 'big-row.gpkg', 'points', { limits })),
      'feature_too_large',
      /fid 2/,
    );
  });
});

describe('GeoPackage locks', () => {
  it('reads a file beside which a killed reader left its lock, and never locks beside the upload', async () => {
    const path = gpkg('stale-lock');
    // What node-sqlite3-wasm leaves when the process dies mid-read: a `<file>.lock` directory.
    mkdirSync(`${path}.lock`);
    const before = besides(path);
    const discovery = await discover(path, 'stale-lock.gpkg');
    expect(discovery.layers[0]?.feature_count).toBe(3);
    let during: string[] = [];
    for await (const _ of readFeatures(path, 'stale-lock.gpkg', 'points')) during = besides(path);
    expect(during).toEqual(before);
    expect(besides(path)).toEqual(before);
  });

  it('reads a file whose header says WAL (no -wal, no shared memory beside it)', async () => {
    const path = gpkg('wal');
    const bytes = readFileSync(path);
    bytes[18] = 2;
    bytes[19] = 2;
    writeFileSync(path, bytes);
    expect((await discover(path, 'wal.gpkg')).layers[0]?.feature_count).toBe(3);
    expect(besides(path)).toEqual(['wal.gpkg']);
  });

  it('leaves nothing behind when a read is stopped mid-way, and the next read works', async () => {
    const path = gpkg('stopped', { count: 5000 });
    const controller = new AbortController();
    let seen = 0;
    let scratch: string[] = [];
    await expect(async () => {
      for await (const _ of readFeatures(path, 'stopped.gpkg', 'points', { signal: controller.signal })) {
        if (++seen === 10) {
          scratch = scratchOf(path);
          controller.abort();
        }
      }
    }).rejects.toThrow(/abort/i);
    expect(scratch).toHaveLength(1);
    expect(scratchOf(path)).toEqual([]);
    expect(besides(path)).toEqual(['stopped.gpkg']);
    expect(await collect(readFeatures(path, 'stopped.gpkg', 'points'))).toHaveLength(5000);
  });
});
