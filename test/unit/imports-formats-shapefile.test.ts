import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { sridOfPrj } from '#datasources/imports/formats/prj.ts';
import { collect, expectInputError, tempDir } from '../fixtures/imports/support.ts';
import { type ZipEntrySpec, zipOf } from '../fixtures/imports/zip-writer.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const SHP = join(import.meta.dirname, '../fixtures/imports/shp');
/** The fixture files of a layer as zip entries (optionally under a folder, some left out). */
const layerFiles = (layer: string, folder = '', without: string[] = []): ZipEntrySpec[] =>
  ['shp', 'shx', 'dbf', 'prj', 'cpg']
    .filter((ext) => !without.includes(ext))
    .flatMap((ext) => {
      try {
        return [{ name: `${folder}${layer}.${ext}`, data: readFileSync(join(SHP, `${layer}.${ext}`)) }];
      } catch {
        return [];
      }
    });
const shpTemps = () => readdirSync(tmpdir()).filter((n) => n.startsWith('geoplane-shp-')).length;

describe('zipped shapefile', () => {
  const path = tmp.file('network.zip', zipOf([...layerFiles('roads', 'data/'), ...layerFiles('wells')]));

  it('discovers one layer per .shp with dbf field types, geometry type, SRID from the .prj, count and bbox', async () => {
    expect(await sniffFormat(path, 'network.zip')).toBe('shapefile');
    const discovery = await discover(path, 'network.zip');
    expect(discovery.format).toBe('shapefile');
    const roads = discovery.layers.find((l) => l.name === 'roads');
    const wells = discovery.layers.find((l) => l.name === 'wells');
    expect(roads).toMatchObject({
      geometry_type: 'MultiLineString',
      srid: 4326,
      feature_count: 3,
      bbox: [8.4, 47.2, 8.8, 47.6],
    });
    expect(roads?.fields).toEqual([
      { name: 'name', type: 'text' },
      { name: 'lanes', type: 'integer' },
      { name: 'length', type: 'double precision' },
      { name: 'open', type: 'integer' },
      { name: 'built', type: 'date' },
    ]);
    expect(wells).toMatchObject({
      geometry_type: 'Point',
      srid: 32632,
      feature_count: 2,
      bbox: [465000, 5250000, 466000, 5251000],
    });
  });

  it('reads features with the .cpg encoding, dates as YYYY-MM-DD, skip resuming exactly, and removes its temp dir', async () => {
    const before = shpTemps();
    const all = await collect(readFeatures(path, 'network.zip', 'roads'));
    expect(all[0]?.properties).toEqual({
      name: 'Hauptstraße',
      lanes: 2,
      length: 12.5,
      open: 1,
      built: '2001-05-17',
    });
    expect(all[0]?.geometry).toMatchObject({ type: 'LineString' });
    expect(all[2]?.properties.lanes).toBeNull();
    expect(await collect(readFeatures(path, 'network.zip', 'roads', { skip: 1 }))).toEqual(all.slice(1));
    // stopping early still removes the temp dir
    for await (const _ of readFeatures(path, 'network.zip', 'wells')) break;
    expect(shpTemps()).toBe(before);
  });

  it('decodes ISO-8859-1 named by the .cpg; without a .cpg or LDID non-UTF-8 text is refused naming the feature', async () => {
    const withCpg = tmp.file('latin.zip', zipOf(layerFiles('latin')));
    expect(
      (await collect(readFeatures(withCpg, 'latin.zip', 'latin'))).map((f) => f.properties.city),
    ).toEqual(['Zürich', 'Genève']);
    // latin.dbf's LDID is 0x00: nothing names the page. Discovery warns (the plan can still
    // name the `encoding`); reading refuses.
    const withoutCpg = tmp.file('latin-nocpg.zip', zipOf(layerFiles('latin', '', ['cpg'])));
    const discovery = await discover(withoutCpg, 'latin-nocpg.zip');
    expect(discovery.layers[0]?.feature_count).toBe(2);
    expect(discovery.warnings.join('\n')).toMatch(/feature 0 .*not UTF-8.*LDID\) is 0x00/);
    await expectInputError(
      () => collect(readFeatures(withoutCpg, 'latin-nocpg.zip', 'latin')),
      'encoding_unknown',
      /feature 0.*LDID\) is 0x00.*`encoding`.*import plan.*\.cpg/,
    );
  });

  it('reports a missing .prj as an unknown SRID with a warning, and a missing .dbf as an error', async () => {
    const noPrj = tmp.file('noprj.zip', zipOf(layerFiles('wells', '', ['prj'])));
    const discovery = await discover(noPrj, 'noprj.zip');
    expect(discovery.layers[0]?.srid).toBeNull();
    expect(discovery.warnings.join()).toMatch(/no \.prj/);
    await expectInputError(
      () => discover(tmp.file('nodbf.zip', zipOf(layerFiles('wells', '', ['dbf']))), 'nodbf.zip'),
      'missing_sidecar',
      /\.dbf/,
    );
  });

  it('refuses a truncated .shp', async () => {
    const files = layerFiles('roads').map((f) =>
      f.name.endsWith('.shp') ? { ...f, data: (f.data as Buffer).subarray(0, 180) } : f,
    );
    await expectInputError(
      () => discover(tmp.file('cut.zip', zipOf(files)), 'cut.zip'),
      'truncated_file',
      /roads/,
    );
  });

  it('recognises SRIDs in .prj files', () => {
    expect(sridOfPrj('PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984"]]')).toBe(3857);
    expect(sridOfPrj('GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989"]]')).toBe(4258);
    expect(sridOfPrj('GEOGCS["NAD83",AUTHORITY["EPSG","4269"]]')).toBe(4269);
    expect(sridOfPrj('PROJCS["WGS 84 / UTM zone 33S",GEOGCS["WGS 84",AUTHORITY["EPSG","4326"]]]')).toBe(
      32733,
    );
    expect(sridOfPrj('PROJCRS["CH1903+ / LV95",ID["EPSG",2056]]')).toBe(2056);
    expect(
      sridOfPrj('PROJCS["Custom",GEOGCS["GCS_WGS_1984",AUTHORITY["EPSG","4326"]],PROJECTION["x"]]'),
    ).toBeNull();
  });
});

describe('hostile zips', () => {
  const shp = layerFiles('wells');

  it('refuses entries with ../, absolute paths, backslashes or drive letters, naming the entry', async () => {
    for (const name of ['../evil.txt', '/etc/evil', 'a\\b.txt', 'C:/evil.txt']) {
      const path = tmp.file('unsafe.zip', zipOf([...shp, { name, data: 'x' }]));
      await expectInputError(
        () => discover(path, 'unsafe.zip'),
        'unsafe_zip_entry',
        new RegExp(name.replace(/[\\.]/g, '\\$&')),
      );
    }
  });

  it('refuses symlink entries', async () => {
    const path = tmp.file('link.zip', zipOf([...shp, { name: 'link', data: '/etc/passwd', mode: 0o120777 }]));
    await expectInputError(() => sniffFormat(path, 'link.zip'), 'unsafe_zip_entry', /link.*symbolic/);
  });

  it('refuses more than the entry limit, a declared total over the limit, and over-compressed entries', async () => {
    const many = tmp.file(
      'many.zip',
      zipOf([
        ...shp,
        ...Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}.txt`, data: '', deflate: false })),
      ]),
    );
    await expectInputError(() => discover(many, 'many.zip'), 'zip_limits', /1004 entries.*1000/);
    const bomb = tmp.file(
      'bomb.zip',
      zipOf([...shp, { name: 'zeros.bin', data: Buffer.alloc(5 * 1024 * 1024) }]),
    );
    await expectInputError(() => discover(bomb, 'bomb.zip'), 'zip_limits', /zeros\.bin.*100:1/);
    const big = tmp.file('big.zip', zipOf(shp));
    await expectInputError(
      () => discover(big, 'big.zip', { limits: { maxZipTotalBytes: 100 } }),
      'zip_limits',
      /more than 100 bytes/,
    );
  });

  it('counts the bytes actually inflated: an entry whose header understates its size is refused', async () => {
    const dbf = shp.find((f) => f.name.endsWith('.dbf')) as ZipEntrySpec;
    const lying = tmp.file(
      'lying.zip',
      zipOf([...shp.filter((f) => f !== dbf), { ...dbf, declaredSize: 10 }]),
    );
    await expectInputError(() => discover(lying, 'lying.zip'), 'zip_limits', /wells\.dbf/);
  });

  it('refuses zips without a .shp (a .vrt, text) as unsupported, and does not follow nested zips', async () => {
    const vrt = tmp.file(
      'vrt.zip',
      zipOf([
        { name: 'layer.vrt', data: '<OGRVRTDataSource/>' },
        { name: 'readme.txt', data: 'hi' },
      ]),
    );
    await expectInputError(
      () => sniffFormat(vrt, 'vrt.zip'),
      'unsupported_format',
      /without a shapefile.*layer\.vrt/,
    );
    const nested = tmp.file('nested.zip', zipOf([{ name: 'inner.zip', data: zipOf(shp) }]));
    await expectInputError(() => discover(nested, 'nested.zip'), 'unsupported_format', /inner\.zip/);
  });
});
