import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import wkx from 'wkx';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { collect, expectInputError, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const SAMPLE = join(import.meta.dirname, '../fixtures/imports/sample.gpkg');
const copy = (name: string) => {
  const path = join(tmp.dir, name);
  copyFileSync(SAMPLE, path);
  return path;
};
const exec = (path: string, sql: string) => {
  const db = new sqlite.Database(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
};

describe('GeoPackage', () => {
  it('discovers the feature tables (not attribute tables) with column types, SRIDs, counts and bboxes', async () => {
    expect(await sniffFormat(SAMPLE, 'sample.gpkg')).toBe('geopackage');
    const discovery = await discover(SAMPLE, 'sample.gpkg');
    expect(discovery.layers.map((l) => l.name)).toEqual(['parcels', 'places']);
    const places = discovery.layers[1];
    expect(places).toMatchObject({
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 3,
      bbox: [7.44, 46.95, 8.54, 47.37],
    });
    expect(places?.fields).toEqual([
      { name: 'name', type: 'text' },
      { name: 'pop', type: 'integer' },
      { name: 'big', type: 'bigint' },
      { name: 'area', type: 'double precision' },
      { name: 'visited', type: 'boolean' },
      { name: 'founded', type: 'date' },
      { name: 'updated', type: 'timestamptz' },
    ]);
    expect(discovery.layers[0]).toMatchObject({
      geometry_type: 'MultiPolygon',
      srid: 2056,
      feature_count: 2,
    });
    expect(discovery.warnings.join()).toMatch(/Polygon and MultiPolygon/);
  });

  it('yields WKB geometries and typed properties in key order, and skip resumes exactly', async () => {
    const all = await collect(readFeatures(SAMPLE, 'sample.gpkg', 'places'));
    expect(all).toHaveLength(3);
    expect(all[0]?.properties).toMatchObject({
      name: 'a',
      pop: 10,
      big: 5000000000,
      area: 1.5,
      visited: true,
      founded: '1291-08-01',
    });
    const geometry = all[0]?.geometry as { wkb: Uint8Array };
    expect(wkx.Geometry.parse(Buffer.from(geometry.wkb)).toGeoJSON()).toEqual({
      type: 'Point',
      coordinates: [7.44, 46.95],
    });
    expect(all[2]?.geometry).toBeNull();
    expect(await collect(readFeatures(SAMPLE, 'sample.gpkg', 'places', { skip: 1 }))).toEqual(all.slice(1));
    expect(await collect(readFeatures(SAMPLE, 'sample.gpkg', 'places', { skip: 3 }))).toEqual([]);
  });

  it('pages through many rows with flat memory and exact resumption', async () => {
    const path = copy('many.gpkg');
    const blob = Buffer.concat([
      Buffer.from([0x47, 0x50, 0, 1, 0xe6, 0x10, 0, 0]),
      wkx.Geometry.parse('POINT(1 2)').toWkb(),
    ]);
    exec(
      path,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
      INSERT INTO places (geom, name) SELECT x'${blob.toString('hex')}', 'r' || i FROM n`,
    );
    const names = (await collect(readFeatures(path, 'many.gpkg', 'places', { skip: 2400 }))).map(
      (f) => f.properties.name,
    );
    expect(names).toHaveLength(103);
    expect(names[0]).toBe('r2398');

    // Keys with gaps, negative ones, and a skip past several key walks.
    const gaps = copy('gaps.gpkg');
    exec(
      gaps,
      `DELETE FROM places;
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 60000)
      INSERT INTO places (fid, geom, name) SELECT i * 7 - 200000, NULL, 'r' || i FROM n`,
    );
    const tail = (await collect(readFeatures(gaps, 'gaps.gpkg', 'places', { skip: 55_003 }))).map(
      (f) => f.properties.name,
    );
    expect(tail).toHaveLength(4997);
    expect([tail[0], tail.at(-1)]).toEqual(['r55003', 'r59999']);
    expect(await collect(readFeatures(gaps, 'gaps.gpkg', 'places', { skip: 60_000 }))).toEqual([]);
  });

  it('skips BLOB columns with a warning', async () => {
    const path = copy('blob.gpkg');
    exec(path, 'ALTER TABLE places ADD COLUMN thumbnail BLOB');
    const discovery = await discover(path, 'blob.gpkg');
    expect(discovery.layers[1]?.fields.map((f) => f.name)).not.toContain('thumbnail');
    expect(discovery.warnings.join()).toMatch(/BLOB column 'thumbnail'/);
  });

  it('refuses a geometry blob without the GP header, naming the feature', async () => {
    const path = copy('badblob.gpkg');
    exec(path, "UPDATE places SET geom = x'0101000000' WHERE name = 'b'");
    await expectInputError(() => discover(path, 'badblob.gpkg'), 'invalid_geometry', /feature 1\b/);
    // Headers that lie: a 64-byte envelope in a 29-byte blob, an invalid envelope indicator, and
    // WKB that counts 4 billion points in 13 bytes.
    const point = '0101000000000000000000f03f0000000000000040';
    for (const [blob, message] of [
      [`47500009e6100000${point}`, /feature 1 \(fid 2\) is truncated/],
      [`4750000fe6100000${point}`, /invalid envelope indicator/],
      ['47500001e61000000104000000ffffffff00000000', /feature 1 of layer 'places'/],
    ] as const) {
      const lying = copy(`lying-${blob.slice(6, 8)}.gpkg`);
      exec(lying, `UPDATE places SET geom = x'${blob}' WHERE name = 'b'`);
      await expectInputError(() => discover(lying, 'lying.gpkg'), 'invalid_geometry', message);
    }
  });

  it('turns a truncated GeoPackage into an input error, and refuses a plain SQLite database', async () => {
    const cut = tmp.file('cut.gpkg', readFileSync(SAMPLE).subarray(0, 6 * 1024));
    const error = await expectInputError(() => discover(cut, 'cut.gpkg'), 'invalid_geopackage');
    expect(error.message).toMatch(/GeoPackage/);
    const plain = join(tmp.dir, 'plain.sqlite');
    exec(plain, 'CREATE TABLE t (a INTEGER)');
    await expectInputError(
      () => sniffFormat(plain, 'plain.gpkg'),
      'unsupported_format',
      /SQLite database that is not a GeoPackage/,
    );
  });
});
