/**
 * Shapefiles as GDAL writes them, in three code pages (issue #25, ADR 0125): `ogr2ogr` writes
 * accented text in windows-1252, -1250 and -1251, with a .cpg (`-lco ENCODING=CP125x`) and with
 * only the .dbf's language driver byte (its default LDID 87, and `-lco ENCODING=LDID/200|201`).
 * Each zip is imported through the local host and the staged rows must hold the text exactly. A
 * .dbf whose code page nothing names is refused at load with the way out, nothing left behind.
 * Needs Debian's `gdal-bin` (installed by `.ci/run`); where it is missing the tests are skipped
 * with that reason — in CI a missing GDAL fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { zipOf } from '../fixtures/imports/zip-writer.ts';
import { uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { adminQuery, importsOf, relationsOf } from '../support/imports.ts';

vi.setConfig({ testTimeout: 180_000 });

const run = promisify(execFile);

async function hasOgr2ogr(): Promise<boolean> {
  try {
    await run('ogr2ogr', ['--version']);
    return true;
  } catch {
    return false;
  }
}

const GDAL = await hasOgr2ogr();
const SKIP_REASON = 'GDAL (ogr2ogr) not found: install Debian gdal-bin (bash .ci/run does) — skipped';
if (!GDAL && process.env.CI) throw new Error('CI must have GDAL (gdal-bin): .ci/run installs it');

/** One GDAL-written shapefile: how ogr2ogr writes it and the text its rows must hold. */
interface Case {
  layer: string;
  /** ogr2ogr's layer creation options (none: its defaults). */
  lco: string[];
  /** Drop the .cpg ogr2ogr wrote before zipping. */
  dropCpg?: boolean;
  /** [name, note] of each row, in order. */
  rows: [string, string][];
  /** What the zip must carry: its .cpg text (undefined: none) and the .dbf's LDID. */
  cpg: string | undefined;
  ldid: number;
}

const CASES: Case[] = [
  {
    layer: 'w1252_default',
    lco: [],
    rows: [
      ['Zürich Café', 'Genève'],
      ['Straße', 'Ærøskøbing'],
    ],
    cpg: undefined,
    ldid: 0x57,
  },
  {
    layer: 'w1252_cpg',
    lco: ['ENCODING=CP1252'],
    // 1252's own letters at 0x80–0x9F (€ “ ” – Š Ÿ), which ISO-8859-1 lacks.
    rows: [
      ['Zürich Café', '“Crème” – 5 €'],
      ['Šibenik', 'Ÿ Œuvre'],
    ],
    cpg: 'CP1252',
    ldid: 0x00,
  },
  {
    layer: 'w1250_cpg',
    lco: ['ENCODING=CP1250'],
    rows: [
      ['Łódź Kraków', 'Gdańsk'],
      ['Świętokrzyskie', 'Žluťoučký kůň'],
    ],
    cpg: 'CP1250',
    ldid: 0x00,
  },
  {
    layer: 'w1250_ldid',
    lco: ['ENCODING=LDID/200'],
    rows: [
      ['Łódź Kraków', 'Gdańsk'],
      ['Świętokrzyskie', 'Žluťoučký kůň'],
    ],
    cpg: undefined,
    ldid: 0xc8,
  },
  {
    layer: 'w1251_cpg',
    lco: ['ENCODING=CP1251'],
    rows: [
      ['Москва', 'Санкт-Петербург'],
      ['Київ', 'Ёлки'],
    ],
    cpg: 'CP1251',
    ldid: 0x00,
  },
  {
    layer: 'w1251_ldid',
    lco: ['ENCODING=LDID/201'],
    rows: [
      ['Москва', 'Санкт-Петербург'],
      ['Київ', 'Ёлки'],
    ],
    cpg: undefined,
    ldid: 0xc9,
  },
  {
    layer: 'utf8_cpg',
    lco: ['ENCODING=UTF-8'],
    rows: [
      ['Zürich Łódź', 'Москва'],
      ['東京', 'Ελλάδα'],
    ],
    cpg: 'UTF-8',
    ldid: 0x00,
  },
];

/** CP1251 without its .cpg: GDAL records no LDID (0), and the bytes aren't UTF-8. */
const UNNAMED: Case = {
  layer: 'w1251_unnamed',
  lco: ['ENCODING=CP1251'],
  dropCpg: true,
  rows: [['Москва', 'Київ']],
  cpg: undefined,
  ldid: 0x00,
};

let dir = '';

/** The zip of the shapefile ogr2ogr writes for `c` from a UTF-8 GeoJSON of its rows. */
async function shapefileZip(c: Case): Promise<Buffer> {
  const source = join(dir, `${c.layer}.geojson`);
  writeFileSync(
    source,
    JSON.stringify({
      type: 'FeatureCollection',
      features: c.rows.map(([name, note], i) => ({
        type: 'Feature',
        properties: { name, note },
        geometry: { type: 'Point', coordinates: [8 + i, 47 + i] },
      })),
    }),
  );
  const out = join(dir, c.layer);
  await run(
    'ogr2ogr',
    ['-f', 'ESRI Shapefile', out, source, '-nln', c.layer, ...c.lco.flatMap((o) => ['-lco', o])],
    {
      env: { ...process.env, CPL_DEBUG: 'OFF' },
      timeout: 120_000,
    },
  );
  if (c.dropCpg) rmSync(join(out, `${c.layer}.cpg`));
  const files = readdirSync(out);
  const cpg = files.find((f) => f.endsWith('.cpg'));
  // What GDAL wrote is what this case is about: the .cpg text and the .dbf's LDID.
  expect(cpg && readFileSync(join(out, cpg), 'latin1').trim(), c.layer).toBe(c.cpg);
  expect(readFileSync(join(out, `${c.layer}.dbf`))[29], c.layer).toBe(c.ldid);
  return zipOf(files.map((f) => ({ name: f, data: readFileSync(join(out, f)) })));
}

/** The rows staged for the import's only layer, as [name, note] in file order. */
async function stagedRows(importId: string): Promise<[string, string][]> {
  const schema = `import_staging_${importId.replaceAll('-', '')}`;
  const tables = await adminQuery<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND position('$' in table_name) = 0`,
    [schema],
  );
  expect(tables).toHaveLength(1);
  const table = (tables[0] as { table_name: string }).table_name;
  const rows = await adminQuery<{ name: string; note: string }>(
    `SELECT name, note FROM "${schema}"."${table}" ORDER BY fid`,
  );
  return rows.map((r) => [r.name, r.note]);
}

describe.skipIf(!GDAL)(GDAL ? 'GDAL-written shapefiles in three code pages' : SKIP_REASON, () => {
  let imports: ReturnType<typeof importsOf>;
  /** The started import of each case, by layer (all uploaded at once, so they load side by side). */
  const started = new Map<string, Promise<{ id: string }>>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'geoplane-shp-code-pages-'));
    const ws = await createWorkspace(uniqueName('cp'));
    imports = importsOf(ws.id);
    for (const c of [...CASES, UNNAMED]) {
      const job = shapefileZip(c).then((zip) => imports.uploaded(zip, `${c.layer}.zip`));
      job.catch(() => undefined); // awaited by its test
      started.set(c.layer, job);
    }
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const c of CASES) {
    const how = `${c.cpg ? `.cpg ${c.cpg}` : 'no .cpg'}, LDID 0x${c.ldid.toString(16).padStart(2, '0')}`;
    it(`${c.layer} (${how}): the staged rows hold the text exactly`, async () => {
      const job = await (started.get(c.layer) as Promise<{ id: string }>);
      const ready = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan'], 150_000);
      expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
      expect(ready.body.discovery.layers[0].fields.map((f: { name: string }) => f.name)).toEqual([
        'name',
        'note',
      ]);
      expect(await stagedRows(job.id)).toEqual(c.rows);
      expect((await imports.cancel(job.id)).status).toBe(202);
      expect((await imports.until(job.id, ['cancelled', 'failed'], 120_000)).body.status).toBe('cancelled');
      expect(await relationsOf(job.id)).toEqual([]);
    });
  }

  it('CP1251 without its .cpg (LDID 0x00, not UTF-8): discovery warns, the load is refused with the way out, which works: encoding in the plan, a retry, the text exact', async () => {
    const job = await (started.get(UNNAMED.layer) as Promise<{ id: string }>);
    const done = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan'], 150_000);
    expect(done.body.status, JSON.stringify(done.body)).toBe('failed');
    expect(done.body.error_message).toMatch(
      /feature 0 of shapefile 'w1251_unnamed' are not UTF-8.*LDID\) is 0x00 \(none\).*set `encoding` for this layer in the import plan.*\.cpg/,
    );
    expect((done.body.warnings ?? []).join('\n')).toMatch(/'w1251_unnamed' are not UTF-8/);
    expect(await relationsOf(job.id)).toEqual([]);

    // The way out the message names (ADR 0127): the plan's encoding, then a retry.
    const layer = { source_layer: UNNAMED.layer, public_id: UNNAMED.layer };
    const unknown = await imports.plan(job.id, { layers: [{ ...layer, encoding: 'cp-nowhere' }] });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.detail).toMatch(/encoding 'cp-nowhere' is not a code page GeoPlane can decode/);
    const planned = await imports.plan(job.id, { layers: [{ ...layer, encoding: 'windows-1251' }] });
    expect(planned.status, planned.text).toBe(200);
    expect((await imports.retry(job.id)).status).toBe(202);
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan'], 150_000);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect(await stagedRows(job.id)).toEqual(UNNAMED.rows);
    expect((await imports.cancel(job.id)).status).toBe(202);
    expect((await imports.until(job.id, ['cancelled', 'failed'], 120_000)).body.status).toBe('cancelled');
    expect(await relationsOf(job.id)).toEqual([]);
  });
});
