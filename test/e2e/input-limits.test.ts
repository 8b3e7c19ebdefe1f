import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_SQL_BYTES } from '#api/schemas.ts';
import { MAX_XML_DEPTH } from '#domain/xml.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';

/** An SLD whose root holds `depth - 1` nested elements (the root is level 1). */
const deepSld = (depth: number) =>
  `<StyledLayerDescriptor version="1.0.0">${'<a>'.repeat(depth - 1)}${'</a>'.repeat(depth - 1)}</StyledLayerDescriptor>`;

/** A Mapbox style whose metadata nests arrays so the whole document is `depth` levels deep. */
const deepMapboxText = (depth: number) =>
  `{"version":8,"sources":{},"layers":[],"metadata":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const sqlOf = (bytes: number) => {
  const head = 'SELECT 1 AS id, NULL::geometry AS geom /*';
  return `${head}${'x'.repeat(bytes - head.length - 2)}*/`;
};

let ws: string;
beforeAll(async () => {
  ws = (await createWorkspace()).id;
});

describe('a layer can never outgrow its item: SQL is limited to 64 KiB of UTF-8', () => {
  let service: string;
  beforeAll(async () => {
    const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    service = uniqueName('svc');
    const res = await call('POST', `/workspaces/${ws}/services`, {
      headers: asSuperAdmin(),
      body: { name: service, type: 'postgis', enabled: false, connection: postgis },
    });
    expect(res.status, res.text).toBe(201);
  });

  it.each([
    ['430 KB of SQL (the reported 500)', sqlOf(430_000)],
    ['one byte over the limit', sqlOf(MAX_SQL_BYTES + 1)],
    [
      '64 Ki characters that are 128 KiB of UTF-8',
      `SELECT 1 AS id, NULL::geometry AS geom /*${'é'.repeat(MAX_SQL_BYTES - 50)}*/`,
    ],
  ])('answers 400 for %s and stores nothing', async (_, sql) => {
    const publicId = uniqueName('big');
    const res = await call('POST', `/workspaces/${ws}/services/${service}/layers`, {
      headers: asSuperAdmin(),
      body: { public_id: publicId, enabled: false, sql_view: { sql, geometry_column: 'geom' } },
    });
    expectError(res, 400, 'validation_failed');
    expect(res.body.issues[0].path).toBe('body.sql_view.sql');
    const list = await call('GET', `/workspaces/${ws}/services/${service}/layers`, {
      headers: asSuperAdmin(),
    });
    expect(list.body.layers.map((l: { public_id: string }) => l.public_id)).not.toContain(publicId);
  });

  it('answers 400 from validate-sql for SQL over the limit', async () => {
    const res = await call('POST', `/workspaces/${ws}/services/${service}/validate-sql`, {
      headers: asSuperAdmin(),
      body: { sql: sqlOf(430_000) },
    });
    expectError(res, 400, 'validation_failed');
  });
});

describe('styles: depth and size limits answer 400, never 500', () => {
  const create = (body: unknown) =>
    call('POST', `/workspaces/${ws}/styles`, { headers: asSuperAdmin(), body });

  it(`accepts an SLD nested ${MAX_XML_DEPTH} levels deep`, async () => {
    const res = await create({ name: uniqueName('sld'), format: 'sld_1.0.0', body: deepSld(MAX_XML_DEPTH) });
    expect(res.status, res.text).toBe(201);
  });

  it.each([MAX_XML_DEPTH + 1, MAX_XML_DEPTH + 2, 1000, 20_000])(
    'answers 400 xml_too_deep for an SLD nested %i levels deep',
    async (depth) => {
      const name = uniqueName('sld');
      const res = await create({ name, format: 'sld_1.1.0', body: deepSld(depth).replace('1.0.0', '1.1.0') });
      expectError(res, 400, 'xml_too_deep');
      expectError(await call('GET', `/workspaces/${ws}/styles/${name}`, { headers: asSuperAdmin() }), 404);
    },
  );

  it('answers 400 xml_too_deep for a deep SE document', async () => {
    const body = `<se:FeatureTypeStyle version="1.1.0" xmlns:se="http://www.opengis.net/se">${'<se:Rule>'.repeat(500)}${'</se:Rule>'.repeat(500)}</se:FeatureTypeStyle>`;
    expectError(await create({ name: uniqueName('se'), format: 'se_1.1.0', body }), 400, 'xml_too_deep');
  });

  it('accepts a Mapbox style nested 100 levels deep', async () => {
    const res = await call('POST', `/workspaces/${ws}/styles`, {
      headers: asSuperAdmin(),
      body: `{"name":"${uniqueName('mb')}","format":"mapbox","body":${deepMapboxText(100)}}`,
    });
    expect(res.status, res.text).toBe(201);
  });

  it.each([
    ['an object', 101],
    ['an object', 6000],
    ['an object', 60_000],
    ['JSON text', 6000],
  ])('answers 400 json_too_deep for a Mapbox style given as %s nested %i levels deep', async (as, depth) => {
    const text = deepMapboxText(depth);
    const body = as === 'JSON text' ? JSON.stringify(text) : text;
    const name = uniqueName('mb');
    const res = await call('POST', `/workspaces/${ws}/styles`, {
      headers: asSuperAdmin(),
      body: `{"name":"${name}","format":"mapbox","body":${body}}`,
    });
    expectError(res, 400, 'json_too_deep');
    expectError(await call('GET', `/workspaces/${ws}/styles/${name}`, { headers: asSuperAdmin() }), 404);
  });

  it('answers 400 json_too_deep for a deep filter expression (the validator is never reached)', async () => {
    const filter = `${'["!",'.repeat(8000)}true${']'.repeat(8000)}`;
    const res = await call('POST', `/workspaces/${ws}/styles`, {
      headers: asSuperAdmin(),
      body: `{"name":"${uniqueName('mb')}","format":"mapbox","body":{"version":8,"sources":{"s":{"type":"geojson","data":{"type":"FeatureCollection","features":[]}}},"layers":[{"id":"l","type":"circle","source":"s","filter":${filter}}]}}`,
    });
    expectError(res, 400, 'json_too_deep');
  });

  it('answers 400 style_too_large when the stored JSON outgrows the limit (numbers written out)', async () => {
    const name = uniqueName('mb');
    const numbers = Array.from({ length: 50_000 }, () => '1e20').join(',');
    const res = await call('POST', `/workspaces/${ws}/styles`, {
      headers: asSuperAdmin(),
      body: `{"name":"${name}","format":"mapbox","body":{"version":8,"sources":{},"layers":[],"metadata":{"a":[${numbers}]}}}`,
    });
    expectError(res, 400, 'style_too_large');
    expectError(await call('GET', `/workspaces/${ws}/styles/${name}`, { headers: asSuperAdmin() }), 404);
  });

  it('answers 400 xml_too_deep for a deep SVG asset', async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg">${'<g>'.repeat(5000)}${'</g>'.repeat(5000)}</svg>`;
    const res = await call('PUT', `/workspaces/${ws}/style-assets/${uniqueName('svg')}`, {
      headers: { ...asSuperAdmin(), 'Content-Type': 'image/svg+xml' },
      body: Buffer.from(svg),
    });
    expectError(res, 400, 'xml_too_deep');
  });
});

describe('tile matrix sets: a definition never outgrows its item', () => {
  const matrix = (i: number, description: string) => ({
    id: String(i),
    title: 'é'.repeat(256),
    description,
    scaleDenominator: 1,
    cellSize: 1,
    pointOfOrigin: [0, 0],
    tileWidth: 256,
    tileHeight: 256,
    matrixWidth: 1,
    matrixHeight: 1,
  });
  const definition = (id: string, description: string) => ({
    id,
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    tileMatrices: Array.from({ length: 64 }, (_, i) => matrix(i, description)),
  });

  it('answers 413 for a definition body over 256 KiB (the reported 841 KB body answered 500)', async () => {
    const id = uniqueName('tms');
    const res = await call('PUT', `/tile-matrix-sets/${id}`, {
      headers: asSuperAdmin(),
      body: definition(id, '€'.repeat(4096)),
    });
    expectError(res, 413, 'body_too_large');
    expectError(await call('GET', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() }), 404);
  });

  it('answers 400 definition_too_large when the canonical JSON outgrows the limit', async () => {
    const id = uniqueName('tms');
    const m = (i: number) =>
      `{"id":"${i}","description":"${'d'.repeat(3840)}","scaleDenominator":1e20,"cellSize":1e20,"pointOfOrigin":[1e20,1e20],"tileWidth":2e9,"tileHeight":2e9,"matrixWidth":2e9,"matrixHeight":2e9}`;
    const body = `{"id":"${id}","crs":"http://www.opengis.net/def/crs/EPSG/0/3857","keywords":[${Array.from({ length: 32 }, () => `"${'k'.repeat(128)}"`).join(',')}],"tileMatrices":[${Array.from({ length: 64 }, (_, i) => m(i)).join(',')}]}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(256 * 1024);
    const res = await call('PUT', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin(), body });
    expectError(res, 400, 'definition_too_large');
  });

  it('stores the largest definition within the limit', async () => {
    const id = uniqueName('tms');
    const res = await call('PUT', `/tile-matrix-sets/${id}`, {
      headers: asSuperAdmin(),
      body: definition(id, '€'.repeat(900)),
    });
    expect(res.status, res.text).toBe(201);
    await call('DELETE', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
  });
});

describe('API keys: owner_email is limited', () => {
  it('answers 400 for a 450 KB owner_email (it answered 500) and creates no key', async () => {
    const res = await call('POST', `/workspaces/${ws}/apikeys`, {
      headers: asSuperAdmin(),
      body: { name: 'k', role_id: 'viewer', owner_email: `${'a'.repeat(450_000)}@example.com` },
    });
    expectError(res, 400, 'validation_failed');
    expect(res.body.issues[0].path).toBe('body.owner_email');
  });
});
