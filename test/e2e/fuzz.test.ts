import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import * as z from 'zod/mini';
import { dataRoutes } from '#api/data-routes.ts';
import { routes } from '#api/routes.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { hostPid, processAlive } from '../support/host-liveness.ts';
import { upload } from '../support/imports.ts';

/** The shared host's process before the fuzzing: the same one must still serve afterwards (issue #22). */
let hostProcess: number | undefined;
beforeAll(() => {
  hostProcess = hostPid(inject('host').dataDir);
});

/** A small seeded PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const PER_ROUTE = Number(process.env.FUZZ_PER_ROUTE ?? 12);

const strings = [
  '',
  ' ',
  'x'.repeat(300),
  '../../etc/passwd',
  '%00',
  '%ZZ',
  '😀',
  "'; DROP TABLE x; --",
  '<script>',
  '00000000-0000-0000-0000-000000000000',
  'DEMO',
  'null',
  '-1',
  '1e309',
  '\u0000',
];

function value(rand: () => number, depth = 0): unknown {
  const pick = Math.floor(rand() * (depth > 2 ? 6 : 9));
  switch (pick) {
    case 0:
      return strings[Math.floor(rand() * strings.length)];
    case 1:
      return Math.floor(rand() * 2 ** 40) * (rand() < 0.5 ? -1 : 1);
    case 2:
      return rand() < 0.5;
    case 3:
      return null;
    case 4:
      return rand() * 1e308;
    case 5:
      return 'a'.repeat(Math.floor(rand() * 2000));
    case 6:
      return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
    default: {
      const keys = [
        'name',
        'id',
        'sql',
        'role_id',
        'members',
        'connection',
        'workspace',
        'service',
        'token',
        'x',
      ];
      return Object.fromEntries(
        Array.from({ length: Math.floor(rand() * 4) }, () => [
          keys[Math.floor(rand() * keys.length)],
          value(rand, depth + 1),
        ]),
      );
    }
  }
}

function body(rand: () => number): string | undefined {
  const r = rand();
  if (r < 0.1) return undefined;
  if (r < 0.2) return '{"unterminated": ';
  if (r < 0.25) return '\u0000\u0001binary';
  return JSON.stringify(value(rand));
}

/** A service with a layer, and a deletion operation of another one (the recursive-deletion routes' objects). */
async function deletionFixtures(wsId: string) {
  const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
  const serviceWithLayer = async (name: string) => {
    const svc = await call('POST', `/workspaces/${wsId}/services`, {
      headers: asSuperAdmin(),
      body: { name, type: 'postgis', enabled: false, connection: postgis },
    });
    expect(svc.status, svc.text).toBe(201);
    const layer = await call('POST', `/workspaces/${wsId}/services/${name}/layers`, {
      headers: asSuperAdmin(),
      body: { source_layer: `${name}_t`, public_id: `${name}-l`, enabled: false },
    });
    expect(layer.status, layer.text).toBe(201);
    return layer.body.id as string;
  };
  const layer = await serviceWithLayer('fz');
  await serviceWithLayer('fz-gone');
  const op = await call('DELETE', `/workspaces/${wsId}/services/fz-gone?recurse=true`, {
    headers: asSuperAdmin(),
  });
  expect(op.status, op.text).toBe(202);
  return { service: 'fz', layer, deletion: op.body.id as string, postgis };
}

describe('fuzzing every route as super_admin', () => {
  it(`answers no 5xx to ${PER_ROUTE} random requests per route (seed ${SEED})`, async () => {
    const ws = await createWorkspace();
    const fixtures = await deletionFixtures(ws.id);
    const rand = prng(SEED);
    const failures: string[] = [];
    for (const op of routes) {
      for (let i = 0; i < PER_ROUTE; i++) {
        const path = op.path.replace('/api/v1', '').replace(/\{(\w+)\}/g, (_m, name: string) => {
          if (name === 'workspace' && rand() < 0.7) return ws.id;
          // Existing objects now and then, so the handlers get past their lookups.
          if (name === 'service' && rand() < 0.5) return fixtures.service;
          if (name === 'id' && op.path.startsWith('/api/v1/deletions/') && rand() < 0.5)
            return fixtures.deletion;
          return encodeURIComponent(String(value(rand, 3)).slice(0, 200)) || 'x';
        });
        const r = rand();
        const query =
          r < 0.3
            ? `?limit=${encodeURIComponent(String(value(rand, 3)))}&cursor=${encodeURIComponent(String(value(rand, 3)))}`
            : r < 0.4
              ? `?recurse=${encodeURIComponent(String(value(rand, 3)))}&status=${encodeURIComponent(String(value(rand, 3)))}`
              : r < 0.45
                ? '?recurse=true'
                : '';
        const payload = body(rand);
        const res = await call(op.method, `${path}${query}`, {
          headers: asSuperAdmin(),
          ...(payload === undefined ? {} : { body: payload }),
        });
        if (res.status >= 500)
          failures.push(
            `${op.operationId} ${op.method} ${path}${query} ${payload?.slice(0, 120)} → ${res.status} ${res.text.slice(0, 200)}`,
          );
        if (res.status >= 400 && res.body?.code !== res.status) {
          failures.push(
            `${op.operationId} ${op.method} ${path}${query} ${payload?.slice(0, 80)} → ${res.status} without the error body: ${res.text.slice(0, 120)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});

type Json = Record<string, unknown>;
type Path = (string | number)[];

/** How deep the deep shapes nest: far past every limit, and past what a recursive walk survives. */
const DEEP = 20_000;
/** Stands in for a value spliced in as text (a structure this deep can't be JSON.stringify'd). */
const SPLICE = '__fuzz_splice__';
const deepArray = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const deepObject = `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`;
const deepXml = (root = 'StyledLayerDescriptor') =>
  `<${root} version="1.0.0">${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}</${root}>`;

const sld = '<StyledLayerDescriptor version="1.0.0"/>';
/** Roles and tile matrix sets are global: their names are unique per run. */
const RUN = Date.now().toString(36);
const ROLE = `fzrole-${RUN}`;
const TMS = `FzTms-${RUN}`;
const mapboxStyle = { version: 8, sources: {}, layers: [], metadata: { m: 'x' } };

function tileMatrixSet(id: string) {
  return {
    id,
    title: 't',
    description: 'd',
    keywords: ['k'],
    uri: 'u',
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    wellKnownScaleSet: 'w',
    tileMatrices: Array.from({ length: 64 }, (_, i) => ({
      id: String(i),
      title: 't',
      description: 'd',
      scaleDenominator: 1,
      cellSize: 1,
      pointOfOrigin: [0, 0],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 1,
      matrixHeight: 1,
    })),
  };
}

/**
 * Valid bodies per operation, so a shape placed in one field gets past the others. Updates address
 * the objects `prerequisites` creates; creates use names of their own.
 */
function samples(ws: string, postgis: Json): Record<string, Json[]> {
  const layer = (publicId: string) => ({
    public_id: publicId,
    title: 't',
    description: 'd',
    enabled: false,
    allowed_roles: ['viewer'],
    dimensions: [{ name: 'time', units: 'ISO8601', extent: '2020', default: '2020', source_property: 'p' }],
    sql_view: { sql: 'SELECT 1 AS id, NULL::geometry AS geom', geometry_column: 'geom', id_column: 'id' },
  });
  const tiles = {
    enabled: true,
    title: 't',
    abstract: 'a',
    settings: {
      tile_matrix_sets: ['WebMercatorQuad'],
      vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
      map_tiles: { enabled: true, formats: ['image/png'] },
      cache_enabled: true,
    },
  };
  const service = (name: string) => ({
    name,
    type: 'postgis',
    enabled: false,
    connection: { ...postgis, password: 'p' },
  });
  const group = (publicId: string) => ({
    public_id: publicId,
    title: 't',
    members: [{ resource: 'fz-l', style: 's', opacity: 1 }],
  });
  const style = (name: string) => [
    { name, format: 'sld_1.0.0', body: sld, title: 't', description: 'd' },
    { name, format: 'mapbox', body: mapboxStyle, title: 't', description: 'd' },
  ];
  const mapping = { claim_name: 'groups', claim_value: 'v', role_id: 'viewer', priority: 1 };
  return {
    createWorkspace: [{ name: 'fzw', description: 'd' }],
    updateWorkspace: [{ description: 'd' }],
    createAPIKey: [{ name: 'k', role_id: 'viewer', owner_email: 'o@example.com', owner_name: 'n' }],
    login: [{ token: 't' }],
    createRole: [{ id: `${ROLE}-new`, name: 'n', description: 'd' }],
    addRolePolicy: [{ workspace: ws, service: 'management', operation: 'getLayer', action: 'read' }],
    createClaimMapping: [mapping],
    createGlobalClaimMapping: [mapping],
    createService: [service('fzs-new')],
    updateService: [service('fzs')],
    validateSQLView: [{ sql: 'SELECT 1 AS id, NULL::geometry AS geom' }],
    createLayer: [layer('fzl-new')],
    // The fixture layer keeps its public id, so the layer groups' member stays resolvable.
    updateLayer: [layer('fz-l')],
    createLayerGroup: [group('fzg-new')],
    updateLayerGroup: [group('fzg')],
    harvestMosaicGranules: [{ uris: ['/fz/a.tif', { uri: '/fz/b.tif', elevation: 1 }], pattern: '*.tif' }],
    updateWMSSettings: [
      { enabled: true, title: 't', abstract: 'a', default_style: 's', extensions: ['z-order'] },
    ],
    updateOGCAPISettings: [{ enabled: true, title: 't', abstract: 'a' }],
    updateOGCTilesAPISettings: [tiles],
    putTileMatrixSet: [tileMatrixSet(TMS)],
    createImport: [
      {
        name: 'n',
        source: { kind: 'upload', filename: 'f.geojson', size_bytes: 10 },
        service_name: 'fzimp',
        auto_publish: false,
      },
      { source: { kind: 'uri', uri: '/fz/a.geojson' }, service_name: 'fzimp2' },
    ],
    createStyle: style('fzst-new'),
    updateStyle: style('fzst'),
  };
}

/** The objects the update samples address: a role, a service, a layer group and a style. */
async function prerequisites(ws: string, postgis: Json) {
  for (const [path, body] of [
    ['/roles', { id: ROLE }],
    [`/workspaces/${ws}/services`, { name: 'fzs', type: 'postgis', enabled: false, connection: postgis }],
    [`/workspaces/${ws}/layer-groups`, { public_id: 'fzg', members: [{ resource: 'fz-l' }] }],
    [`/workspaces/${ws}/styles`, { name: 'fzst', format: 'sld_1.0.0', body: sld }],
  ] as const) {
    const res = await call('POST', path, { headers: asSuperAdmin(), body });
    expect(res.status, `${path}: ${res.text}`).toBe(201);
  }
}

/**
 * Path parameters naming the objects the samples address, so handlers get to the body; deletions
 * address objects that don't exist, so the fixtures survive every route.
 */
function fixedPath(op: (typeof routes)[number], ws: string, fixtures: { layer: string; deletion: string }) {
  const missing = op.method === 'DELETE';
  const values: Record<string, string> = {
    workspace: ws,
    service: missing ? 'fz-missing' : op.operationId === 'updateService' ? 'fzs' : 'fz',
    layer: missing ? '00000000-0000-4000-8000-000000000000' : fixtures.layer,
    id: fixtures.deletion,
    tileMatrixSet: missing ? 'FzMissing' : TMS,
    style: missing ? 'fz-missing' : 'fzst',
    group: missing ? 'fz-missing' : 'fzg',
    asset: 'fz-asset',
    keyId: '00000000-0000-4000-8000-000000000000',
    mappingId: '00000000-0000-4000-8000-000000000000',
    roleId: missing ? 'fz-missing' : ROLE,
    policyId: '0123456789abcdef0123',
    granule: 'g',
  };
  return op.path.replace('/api/v1', '').replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? 'x');
}

/** Every path inside a sample: its object and array members and its leaves. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const path = [...prefix, Array.isArray(value) ? Number(k) : k];
    return [path, ...pathsOf(v, path)];
  });
}

function at(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Json)?.[k as string], value);
}

function withValue(sample: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(sample) as Json;
  const parent = at(copy, path.slice(0, -1)) as Json;
  parent[path.at(-1) as string] = value;
  return copy;
}

/** A string of about `n` characters of `ch` that keeps the sample's own form (SQL stays SQL, an email an email). */
function padded(sample: string, key: string | number, n: number, ch: string): string {
  if (key === 'sql') return `${sample} /*${ch.repeat(n)}*/`;
  if (sample.includes('@')) return `${(ch === 'x' ? 'a' : ch).repeat(n)}${sample}`;
  if (sample.startsWith('<')) return sample.replace('/>', `><!--${ch.repeat(n)}--></StyledLayerDescriptor>`);
  return ch.repeat(n);
}

/** The JSON Schema node of a body at a path (following $ref and picking the union member that fits). */
function schemaAt(root: Json, node: Json | undefined, sample: unknown): Json | undefined {
  if (!node) return undefined;
  if (typeof node.$ref === 'string')
    return schemaAt(root, (root.$defs as Json)?.[node.$ref.split('/').pop() as string] as Json, sample);
  const options = (node.anyOf ?? node.oneOf) as Json[] | undefined;
  if (options) {
    const fits = options.find((o) => {
      const r = schemaAt(root, o, sample);
      if (typeof sample === 'string') return r?.type === 'string';
      if (Array.isArray(sample)) return r?.type === 'array';
      if (sample && typeof sample === 'object')
        return r?.type === 'object' && Object.keys(sample).every((k) => k in ((r.properties as Json) ?? {}));
      return true;
    });
    return fits ? schemaAt(root, fits, sample) : undefined;
  }
  return node;
}

/** Strings the domain checks beyond the schema (a known CRS, guarded SQL): kept, so the body gets to the store. */
const SEMANTIC = new Set(['crs', 'sql']);

/** The sample with every free string at its schema's maxLength in 3-byte characters, free string lists full. */
function maximal(root: Json, node: Json | undefined, sample: unknown): unknown {
  const schema = schemaAt(root, node, sample);
  if (!schema) return sample;
  if (typeof sample === 'string') {
    const free = schema.pattern === undefined && schema.format === undefined && schema.enum === undefined;
    return free && typeof schema.maxLength === 'number' ? '€'.repeat(schema.maxLength) : sample;
  }
  if (Array.isArray(sample)) {
    const items = schemaAt(root, schema.items as Json, sample[0]);
    const freeStrings =
      typeof sample[0] === 'string' && items?.pattern === undefined && items?.enum === undefined;
    if (freeStrings && typeof schema.maxItems === 'number' && typeof items?.maxLength === 'number') {
      const width = items.maxLength as number;
      return Array.from(
        { length: schema.maxItems },
        (_, i) => `${i}`.padStart(3, '0').slice(-width) + '€'.repeat(Math.max(0, width - 3)),
      );
    }
    return sample.map((v) => maximal(root, schema.items as Json, v));
  }
  if (sample && typeof sample === 'object') {
    const props = (schema.properties as Json) ?? {};
    return Object.fromEntries(
      Object.entries(sample).map(([k, v]) => [k, SEMANTIC.has(k) ? v : maximal(root, props[k] as Json, v)]),
    );
  }
  return sample;
}

describe('fuzzing every route with the shapes of issue #10 §2', () => {
  it('answers no 5xx to item-size, deep-XML and deep-JSON shapes in every field of every route', async () => {
    const ws = await createWorkspace();
    const fixtures = await deletionFixtures(ws.id);
    await prerequisites(ws.id, fixtures.postgis);
    const valid = samples(ws.id, fixtures.postgis);
    const failures: string[] = [];
    const send = async (op: (typeof routes)[number], what: string, body: string | Buffer, headers = {}) => {
      const path = fixedPath(op, ws.id, fixtures);
      const res = await call(op.method, path, { headers: { ...asSuperAdmin(), ...headers }, body });
      if (res.status >= 500 || (res.status >= 400 && res.body?.code !== res.status)) {
        failures.push(
          `${op.operationId} ${op.method} ${path} [${what}] → ${res.status} ${res.text.slice(0, 160)}`,
        );
      }
    };
    for (const op of routes) {
      // Whole-body shapes, on every route (those without a body must ignore or refuse them).
      await send(op, 'deep JSON array body', deepArray);
      await send(op, 'deep JSON object body', deepObject);
      await send(op, 'deep XML body', JSON.stringify(deepXml()));
      await send(op, '900 KB string body', JSON.stringify('x'.repeat(900_000)));
      if (op.rawBody) {
        await send(op, 'deep SVG', Buffer.from(deepXml('svg')), { 'Content-Type': 'image/svg+xml' });
        await send(op, 'deep XML', Buffer.from(deepXml('x')), { 'Content-Type': 'application/octet-stream' });
      }
      if (!op.request.body) continue;
      const schema = z.toJSONSchema(op.request.body, { unrepresentable: 'any', io: 'input' }) as Json;
      for (const sample of valid[op.operationId] ?? []) {
        await send(op, 'every field at its maximum', JSON.stringify(maximal(schema, schema, sample)));
        for (const path of pathsOf(sample)) {
          const where = path.join('.');
          const spliced = (text: string) =>
            JSON.stringify(withValue(sample, path, SPLICE)).replace(`"${SPLICE}"`, text);
          await send(op, `deep JSON array in ${where}`, spliced(deepArray));
          await send(op, `deep JSON object in ${where}`, spliced(deepObject));
          const leaf = at(sample, path);
          if (typeof leaf !== 'string') continue;
          const key = path.at(-1) as string | number;
          const shaped = (value: string) => JSON.stringify(withValue(sample, path, value));
          await send(op, `deep XML in ${where}`, shaped(deepXml()));
          await send(op, `430 KB in ${where}`, shaped(padded(leaf, key, 430_000, 'x')));
          await send(op, `420 KB of 3-byte characters in ${where}`, shaped(padded(leaf, key, 140_000, '€')));
        }
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);
});

/** A file name of 1–255 characters from those that cut paths short or long (dots, spaces, separators' look-alikes). */
function fileName(rand: () => number): string {
  const pieces = [
    '.',
    '..',
    'x',
    '€',
    ' ',
    '\n',
    '%2e',
    '%00',
    ':',
    '*',
    'CON',
    'a'.repeat(50),
    '😀',
    '-',
    '_',
  ];
  const length = 1 + Math.floor(rand() * 255);
  let name = '';
  while (name.length < length) name += pieces[Math.floor(rand() * pieces.length)];
  return name.slice(0, length);
}

describe('fuzzing import uploads with random file names (issue #22)', () => {
  it(`answers no 5xx and keeps the host up for ${PER_ROUTE * 2} file names (seed ${SEED})`, async () => {
    const ws = await createWorkspace();
    const rand = prng(SEED + 22);
    const failures: string[] = [];
    const names = [
      'x'.repeat(248),
      'x'.repeat(255),
      '..',
      '...',
      'a..b',
      ...Array.from({ length: PER_ROUTE * 2 }, () => fileName(rand)),
    ];
    for (const filename of names) {
      const shown = JSON.stringify(filename.slice(0, 40));
      const created = await call('POST', `/workspaces/${ws.id}/imports`, {
        headers: asSuperAdmin(),
        body: { source: { kind: 'upload', filename } },
      });
      if (created.status !== 201) {
        failures.push(
          `create ${shown} (${filename.length}) → ${created.status} ${created.text.slice(0, 160)}`,
        );
        continue;
      }
      const sent = await upload(
        created.body.upload,
        Buffer.from('{"type":"FeatureCollection","features":[]}'),
      );
      if (sent.status !== 204)
        failures.push(`upload ${shown} (${filename.length}) → ${sent.status} ${sent.text.slice(0, 160)}`);
      const started = await call('POST', `/workspaces/${ws.id}/imports/${created.body.id}/start`, {
        headers: asSuperAdmin(),
      });
      if (started.status !== 202)
        failures.push(
          `start ${shown} (${filename.length}) → ${started.status} ${started.text.slice(0, 160)}`,
        );
      await call('DELETE', `/workspaces/${ws.id}/imports/${created.body.id}`, { headers: asSuperAdmin() });
    }
    expect(failures).toEqual([]);
  }, 300_000);
});

/** Values a data-plane path segment or query value is fuzzed with (sent percent-encoded unless raw). */
const hostile = [
  '-1',
  '0',
  '-0',
  '+1',
  '1.5',
  '1e3',
  '0x10',
  '00004',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999999',
  '1e309',
  'NaN',
  'Infinity',
  ' 1',
  '..',
  '.',
  '%',
  '%00',
  '%2F',
  '\u0000',
  '\u202e',
  '😀',
  "'",
  '"',
  '\\',
  '<script>',
  "1' OR '1'='1",
  'constructor',
  '__proto__',
  'x'.repeat(256),
  'x'.repeat(257),
  '€'.repeat(300),
];
/** Bytes sent as they are: percent-garbage, overlong and surrogate UTF-8. */
const rawHostile = [
  '%ZZ',
  '%',
  '%C0%80',
  '%ED%A0%80',
  '%FF',
  '%%%',
  '%u0041',
  '%2F',
  '%5C',
  '%3F',
  '%23',
  '%2e',
];

/** The value of a fuzzed path segment or query value, ready for the URL. */
function hostileValue(rand: () => number): string {
  const r = rand();
  if (r < 0.15) return rawHostile[Math.floor(rand() * rawHostile.length)] as string;
  if (r < 0.85) return encodeURIComponent(hostile[Math.floor(rand() * hostile.length)] as string);
  return encodeURIComponent(String(value(rand, 3)).slice(0, 300)) || 'x';
}

/** A cursor of the items' `next` form (base64url JSON) around a hostile `after`. */
const cursor = (after: unknown, extra: Record<string, unknown> = {}) =>
  Buffer.from(JSON.stringify({ v: 1, after, ...extra })).toString('base64url');

const EPSG = 'http://www.opengis.net/def/crs/EPSG/0/';
/** Hostile values of the items' query parameters (and their names), encoded. */
const queryValues: Record<string, string[]> = {
  bbox: [
    '1,2,3',
    '1,2,3,4,5',
    'NaN,1,2,3',
    '-180,-90,180,90',
    '180,-90,-180,90',
    '-1e308,-1e308,1e308,1e308',
    '0,0,0,0',
    '0,50,10,40',
    '1,2,3,4,6,5',
    ',,,',
    'x'.repeat(4000),
    '1e-320,1e-320,2e-320,2e-320',
  ],
  'bbox-crs': [
    `${EPSG}3857`,
    `${EPSG}4326`,
    '[EPSG:3857]',
    '[EPSG:999999999]',
    'EPSG:3857',
    `https://www.opengis.net/def/crs/EPSG/0/3857`,
    `${EPSG}${'9'.repeat(300)}`,
  ],
  crs: [`${EPSG}3857`, `${EPSG}4326`, '[OGC:CRS84]', '[EPSG:0]', `${EPSG}-1`, 'CRS84', ''],
  datetime: [
    '2020-01-01',
    '../..',
    '..',
    '/',
    '2020-02-30',
    '0000-01-01',
    '9999-12-31T23:59:60Z',
    '2020-01-01T25:00:00Z',
    '2020-01-01T00:00:00+99:99',
    '1200-01-01/1100-01-01',
    '2020-01-01/2021-01-01/2022-01-01',
    'yesterday',
  ],
  limit: ['0', '-1', '1', '1e3', '99999999999999999999', ' 5', '+5', '5.0', '', 'abc'],
  f: ['json', 'geojson', 'mvt', 'tilejson', 'mapbox', 'oas30', 'xml', 'JSON', ''],
  next: [
    'garbage',
    '',
    cursor('abc'),
    cursor('99999999999999999999'),
    cursor('-1'),
    cursor('\u0000'),
    cursor(7, {}),
    cursor('7', { x: 1 }),
    cursor('x'.repeat(2000)),
    Buffer.from('[1]').toString('base64url'),
    'A'.repeat(5000),
  ],
  // Queryables of the demo tables (places, roads) and names that are none.
  name: ['Road 7', 'Place 7', '', '\u0000', "' OR 1=1 --"],
  class: ['motorway', ''],
  lanes: ['99999999999999999999', '-0', '1.5', 'true'],
  population: ['1e400', '99999999999', 'abc'],
  founded: ['2020-13-45', '0000-01-01', 'x'],
  id: ['abc', '9223372036854775808', '-1'],
  constructor: ['1'],
  ['__proto__']: ['1'],
  'unknown-param': ['1'],
};

/** One hostile query string: a few parameters (some repeated), some names raw garbage. */
function hostileQuery(rand: () => number): string {
  const names = Object.keys(queryValues);
  const parts: string[] = [];
  for (let n = Math.floor(rand() * 5); n > 0; n--) {
    const r = rand();
    if (r < 0.1) {
      parts.push(`${rawHostile[Math.floor(rand() * rawHostile.length)]}=${hostileValue(rand)}`);
      continue;
    }
    const name = names[Math.floor(rand() * names.length)] as string;
    const values = queryValues[name] as string[];
    const v = r < 0.85 ? (values[Math.floor(rand() * values.length)] as string) : hostileValue(rand);
    const one = `${encodeURIComponent(name)}=${r < 0.85 ? encodeURIComponent(v) : v}`;
    parts.push(one, ...(rand() < 0.15 ? [one] : []));
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A 4xx of the data plane: its OGC exception body (`shared/http/make-data-handler.ts#exception`). */
function ogcException(res: { status: number; body: any; headers: Record<string, string> }): boolean {
  const b = res.body;
  return (
    /application\/json/.test(res.headers['content-type'] ?? '') &&
    typeof b?.code === 'string' &&
    typeof b.description === 'string' &&
    b.status === res.status &&
    typeof b.request_id === 'string' &&
    b.request_id.length > 0
  );
}

describe('fuzzing every data route (issue #22)', () => {
  interface Plane {
    ws: { id: string; name: string };
    viewer: string;
    style: string;
  }
  let plane: Plane;
  const origin = () => new URL(inject('host').url).origin;

  beforeAll(async () => {
    const ws = await createWorkspace();
    const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    const svc = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'pg', type: 'postgis', connection: postgis },
    });
    expect(svc.status, svc.text).toBe(201);
    const layers: Record<string, unknown>[] = [
      { source_layer: 'public.places', public_id: 'places', public: true },
      { source_layer: 'public.roads', public_id: 'roads' },
      {
        source_layer: 'public.places',
        public_id: 'timed',
        public: true,
        dimensions: [{ name: 'time', units: 'ISO8601', extent: '1200/1900', source_property: 'founded' }],
      },
      {
        public_id: 'view',
        sql_view: {
          sql: 'SELECT id, name, lanes, geom FROM public.roads',
          geometry_column: 'geom',
          id_column: 'id',
        },
      },
      { source_layer: 'public.roads', public_id: 'draft', enabled: false },
    ];
    for (const body of layers) {
      const res = await call('POST', `/workspaces/${ws.id}/services/pg/layers`, {
        headers: asSuperAdmin(),
        body,
      });
      expect(res.status, res.text).toBe(201);
    }
    for (const kind of ['ogcapi', 'ogc-tiles']) {
      const current = await call('GET', `/workspaces/${ws.id}/settings/${kind}`, { headers: asSuperAdmin() });
      const { version: _v, ...doc } = current.body;
      const res = await call('PUT', `/workspaces/${ws.id}/settings/${kind}`, {
        headers: { ...asSuperAdmin(), 'If-Match': current.headers.etag as string },
        body: { ...doc, enabled: true },
      });
      expect(res.status, res.text).toBe(200);
    }
    const style = 'fz-map';
    const created = await call('POST', `/workspaces/${ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: {
        name: style,
        format: 'mapbox',
        body: JSON.stringify({
          version: 8,
          sources: { s: { type: 'vector', url: 'https://x.example/t.json' } },
          layers: [{ id: 'l', type: 'line', source: 's', 'source-layer': 'roads' }],
        }),
      },
    });
    expect(created.status, created.text).toBe(201);
    const key = await call('POST', `/workspaces/${ws.id}/apikeys`, {
      headers: asSuperAdmin(),
      body: { name: 'fz-viewer', role_id: 'viewer' },
    });
    expect(key.status, key.text).toBe(201);
    plane = { ws, viewer: key.body.key, style };
  }, 120_000);

  /** A sensible value of a path parameter now and then, so requests get past the lookups. */
  function segment(name: string, rand: () => number): string {
    const known: Record<string, string[]> = {
      workspace: [plane.ws.id, plane.ws.name],
      collectionId: ['places', 'roads', 'timed', 'view', 'draft', 'nope'],
      featureId: ['7', '1'],
      tileMatrixSetId: ['WebMercatorQuad', 'WorldCRS84Quad'],
      tileMatrix: ['0', '4', '24', '25'],
      tileRow: ['0', '5'],
      tileCol: ['0', '7'],
      styleId: [plane.style],
    };
    const options = known[name] ?? [];
    const sensible = name === 'workspace' ? 0.8 : 0.55;
    return options.length && rand() < sensible
      ? encodeURIComponent(options[Math.floor(rand() * options.length)] as string)
      : hostileValue(rand);
  }

  /**
   * Does the path, as an HTTP client sends it (dot segments resolved), still match a data route?
   * One that doesn't (`/collections/..`) never reaches the data plane: the gateway's own 404 answers.
   */
  function reachesDataPlane(path: string): boolean {
    const sent = new URL(origin() + path).pathname;
    return dataRoutes.some((r) => new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(sent));
  }

  async function probe(failures: string[], path: string, headers: Record<string, string>, who: string) {
    const res = await call('GET', path, { baseUrl: origin(), headers });
    const shown = `${who} GET ${path.slice(0, 300)} → ${res.status} ${res.text.slice(0, 160)}`;
    const gatewayMiss =
      res.status === 404 && res.body?.reason === 'route_not_found' && !reachesDataPlane(path);
    if (res.status >= 500) failures.push(shown);
    else if (res.status >= 400 && !gatewayMiss && !ogcException(res))
      failures.push(`${shown} (not an OGC exception body)`);
    else if (![200, 204, 304, 400, 401, 404, 422, 426].includes(res.status))
      failures.push(`${shown} (unexpected)`);
    return res;
  }

  const callers = (): [string, Record<string, string>][] => [
    ['anonymous', {}],
    ['viewer', { 'X-API-Key': plane.viewer }],
  ];

  it('answers every listed hostile value of every path parameter with no 5xx, anonymous and with a credential', async () => {
    const failures: string[] = [];
    const rand = prng(SEED + 24);
    for (const route of dataRoutes) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      for (const target of names) {
        const values = [...hostile.map((v) => encodeURIComponent(v)), ...rawHostile];
        for (const v of values) {
          const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
            if (name === target) return v;
            // The other parameters sensible, so the hostile one is what the handler meets.
            const fixed: Record<string, string> = {
              workspace: plane.ws.id,
              collectionId: 'roads',
              featureId: '7',
              tileMatrixSetId: 'WebMercatorQuad',
              tileMatrix: '4',
              tileRow: '5',
              tileCol: '7',
              styleId: plane.style,
            };
            return fixed[name] ?? 'x';
          });
          const [who, headers] = callers()[Math.floor(rand() * 2)] as [string, Record<string, string>];
          await probe(failures, path, headers, who);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('answers every listed hostile value of every items parameter with no 5xx', async () => {
    const failures: string[] = [];
    for (const collection of ['places', 'roads', 'timed', 'view']) {
      for (const [name, values] of Object.entries(queryValues)) {
        for (const v of values) {
          const q = `?${encodeURIComponent(name)}=${encodeURIComponent(v)}`;
          for (const sub of ['/items', '/items/7']) {
            const path = `/workspaces/${plane.ws.id}/ogc/collections/${collection}${sub}${q}`;
            await probe(failures, path, { 'X-API-Key': plane.viewer }, 'viewer');
          }
        }
      }
    }
    // Repeated parameters, and a query of every parameter at once at great length.
    for (const q of [
      '?limit=1&limit=2',
      '?bbox=0,0,1,1&bbox=0,0,2,2',
      '?f=json&f=json',
      `?${Object.keys(queryValues)
        .map((k) => `${encodeURIComponent(k)}=${'9'.repeat(400)}`)
        .join('&')}`,
      `?name=${'%F0%9F%98%80'.repeat(600)}`,
    ]) {
      await probe(failures, `/workspaces/${plane.ws.id}/ogc/collections/roads/items${q}`, {}, 'anonymous');
      await probe(failures, `/workspaces/${plane.ws.id}/ogc/collections/places/items${q}`, {}, 'anonymous');
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('answers hostile headers on every data route with no 5xx; a bad credential is the authorizer 401', async () => {
    const failures: string[] = [];
    const headerCases: [string, string][] = [
      ['If-None-Match', '*'],
      ['If-None-Match', `W/"${'x'.repeat(4000)}"`],
      ['If-None-Match', ',, ,"",W/'],
      ['Accept', 'application/xml'],
      ['Accept', '*/*;q=garbage, text/html;;'],
      ['X-Forwarded-Proto', 'http'],
      ['X-Forwarded-Proto', 'HTTP, https'],
      ['X-Forwarded-Proto', 'gopher'],
      ['Cookie', 'a=b; c; =d; geoplane=%ZZ'],
      ['Authorization', 'Basic Zm9vOmJhcg=='],
      ['Authorization', `Bearer ${'a'.repeat(6000)}`],
      ['Authorization', 'Bearer a.b.c'],
      ['X-API-Key', 'x'.repeat(5000)],
      ['X-API-Key', '\u00e9\u00e9'],
    ];
    const credential = new Set(['authorization', 'x-api-key']);
    for (const route of dataRoutes) {
      const path = route.path.replace(
        /\{(\w+)\}/g,
        (_m, name: string) =>
          ({
            workspace: plane.ws.id,
            collectionId: 'places',
            featureId: '7',
            tileMatrixSetId: 'WebMercatorQuad',
            tileMatrix: '4',
            tileRow: '5',
            tileCol: '7',
            styleId: plane.style,
          })[name] ?? 'x',
      );
      for (const [name, value] of headerCases) {
        const res = await call('GET', path, { baseUrl: origin(), headers: { [name]: value } });
        const shown = `${route.operationId} ${name}: ${value.slice(0, 40)} → ${res.status} ${res.text.slice(0, 160)}`;
        if (credential.has(name.toLowerCase())) {
          // Never served as anonymous: the authorizer refuses it, with the standard error body.
          if (res.status !== 401 || res.body?.code !== 401 || res.body?.reason !== 'unauthenticated')
            failures.push(`${shown} (not the authorizer's 401)`);
        } else if (res.status >= 500) failures.push(shown);
        else if (res.status >= 400 && !ogcException(res))
          failures.push(`${shown} (not an OGC exception body)`);
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it(`answers no 5xx to ${PER_ROUTE * 4} random requests per data route, anonymous and with a credential (seed ${SEED})`, async () => {
    const failures: string[] = [];
    const rand = prng(SEED + 8);
    const statuses = new Set<number>();
    for (const route of dataRoutes) {
      for (let i = 0; i < PER_ROUTE * 4; i++) {
        const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => segment(name, rand));
        const [who, headers] = callers()[Math.floor(rand() * 2)] as [string, Record<string, string>];
        const extra: Record<string, string> =
          rand() < 0.2 ? { 'If-None-Match': `"${'x'.repeat(100)}", W/"y", *` } : {};
        const res = await probe(failures, `${path}${hostileQuery(rand)}`, { ...headers, ...extra }, who);
        statuses.add(res.status);
      }
    }
    expect(failures).toEqual([]);
    // The requests got past the edge into the handlers, their lookups and the data, not only refused.
    for (const status of [200, 400, 401, 404]) expect([...statuses]).toContain(status);
    expect(hostProcess === undefined || processAlive(hostProcess)).toBe(true);
  }, 300_000);
});

describe('the shared host after the fuzzing', () => {
  it('is the same process, alive and answering', async () => {
    expect(hostProcess, 'the shared host process was found before the fuzzing').toBeDefined();
    expect(processAlive(hostProcess as number)).toBe(true);
    expect(hostPid(inject('host').dataDir)).toBe(hostProcess);
    const res = await call('GET', '/workspaces', { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
  });
});
