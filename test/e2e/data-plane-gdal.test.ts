/**
 * Real clients nobody here wrote read the data plane (issue #24): GDAL's OAPIF driver lists exactly
 * the readable collections and copies every feature of an imported 20,000-feature layer into a
 * GeoPackage; GDAL's MVT driver opens a served tile. Debian's `gdal-bin` (installed by `.ci/run`);
 * where it is missing the tests are skipped with that reason — in CI a missing GDAL fails.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hostOrigin, ogc, publishLayer, servedWorkspace, setSettings } from '../support/data-plane.ts';
import { createKey, withKey } from '../support/fixtures.ts';
import { adminQuery, importsOf, pointsGeoJson } from '../support/imports.ts';

const run = promisify(execFile);

async function hasGdal(): Promise<boolean> {
  try {
    await run('ogrinfo', ['--version']);
    return true;
  } catch {
    return false;
  }
}

const GDAL = await hasGdal();
const SKIP_REASON = 'GDAL (ogrinfo/ogr2ogr) not found: install Debian gdal-bin (bash .ci/run does) — skipped';
if (!GDAL && process.env.CI) throw new Error('CI must have GDAL (gdal-bin): .ci/run installs it');

const FEATURES = 20_000;

/** Runs a GDAL program against the test host: its CA trusted, an API key if given, nothing else. */
async function gdal(program: 'ogrinfo' | 'ogr2ogr', args: string[], key?: string) {
  const { stdout, stderr } = await run(program, args, {
    env: {
      ...process.env,
      CURL_CA_BUNDLE: join(inject('host').dataDir, 'tls-cert.pem'),
      GDAL_HTTP_TIMEOUT: '60',
      ...(key ? { GDAL_HTTP_HEADERS: `X-API-Key: ${key}` } : {}),
      CPL_DEBUG: 'OFF',
    },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 240_000,
  });
  return { stdout, stderr };
}

/** The layer names `ogrinfo -so` lists (`1: name (Type)`). */
function listedLayers(stdout: string): string[] {
  return [...stdout.matchAll(/^\d+: (\S+)/gm)].map((m) => m[1] as string).sort();
}

describe.skipIf(!GDAL)(GDAL ? 'GDAL reads the data plane' : SKIP_REASON, () => {
  let ws: { id: string; name: string };
  let viewer: string;
  let importId: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'geoplane-gdal-'));
    const served = await servedWorkspace();
    ws = served.ws;
    await publishLayer(ws.id, served.service.id, { source_layer: 'public.places', public: true });
    await publishLayer(ws.id, served.service.id, { source_layer: 'public.roads' });
    await publishLayer(ws.id, served.service.id, { source_layer: 'public.parcels', enabled: false });
    await setSettings(ws.id, 'ogc-tiles', { enabled: true });
    viewer = (await createKey(ws.id, 'viewer')).key;
    // A user's file, imported and published: the layer the issue found served by nothing.
    const imports = importsOf(ws.id);
    const started = await imports.uploaded(pointsGeoJson(FEATURES), 'points.geojson', { name: 'points' });
    importId = started.id;
    const ready = await imports.until(importId, ['ready_to_publish', 'failed'], 180_000);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect((await imports.publish(importId)).status).toBe(202);
    const done = await imports.until(importId, ['published', 'failed'], 180_000);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
  }, 400_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const base = () => `OAPIF:${hostOrigin()}/workspaces/${ws.name}/ogc`;

  it('ogrinfo -so lists exactly the collections the viewer may read (drafts left out)', async () => {
    const { stdout } = await gdal('ogrinfo', ['-ro', '-so', base()], viewer);
    expect(listedLayers(stdout)).toEqual(['places', 'points', 'roads']);
  }, 120_000);

  it('anonymous ogrinfo, once the Features documents are public, lists the public collection only', async () => {
    await setSettings(ws.id, 'ogcapi', { public: true });
    try {
      const { stdout } = await gdal('ogrinfo', ['-ro', '-so', base()]);
      expect(listedLayers(stdout)).toEqual(['places']);
    } finally {
      await setSettings(ws.id, 'ogcapi', { public: false });
    }
  }, 120_000);

  it('ogr2ogr copies every feature of the 20,000-feature layer into a GeoPackage (count and checksum equal the source)', async () => {
    const out = join(dir, 'points.gpkg');
    await gdal('ogr2ogr', ['-f', 'GPKG', out, base(), 'points', '-oo', 'PAGE_SIZE=1000'], viewer);
    const { stdout } = await gdal('ogrinfo', [
      '-ro',
      out,
      '-sql',
      'SELECT COUNT(*) AS n, SUM(rank) AS ranks, COUNT(DISTINCT name) AS names FROM points',
    ]);
    const schema = `import_${importId.replaceAll('-', '')}`;
    const [source] = await adminQuery<{ n: string; ranks: string; names: string }>(
      `SELECT COUNT(*) AS n, SUM(rank) AS ranks, COUNT(DISTINCT name) AS names FROM "${schema}".points`,
    );
    expect(Number(source?.n)).toBe(FEATURES);
    expect(stdout).toMatch(new RegExp(`n \\(Integer[^)]*\\) = ${source?.n}\\b`));
    expect(stdout).toMatch(new RegExp(`ranks \\([^)]*\\) = ${source?.ranks}\\b`));
    expect(stdout).toMatch(new RegExp(`names \\([^)]*\\) = ${source?.names}\\b`));
  }, 300_000);

  it("GDAL's MVT driver opens a served tile: the layer and its feature count", async () => {
    const res = await ogc(ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(viewer));
    expect(res.status, res.text).toBe(200);
    const expected = new VectorTile(new PbfReader(res.raw as Buffer)).layers.roads?.length ?? 0;
    expect(expected).toBeGreaterThan(0);
    // z/x/y in the path, as the driver reads a tile's position from it.
    mkdirSync(join(dir, '4', '7'), { recursive: true });
    const file = join(dir, '4', '7', '5.pbf');
    writeFileSync(file, res.raw as Buffer);
    const { stdout } = await gdal('ogrinfo', ['-ro', '-so', '-al', file]);
    expect(stdout).toMatch(/Layer name: roads/);
    expect(stdout).toMatch(new RegExp(`Feature Count: ${expected}\\b`));
  }, 60_000);
});
