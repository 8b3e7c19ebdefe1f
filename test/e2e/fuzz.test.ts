import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import * as z from 'zod/mini';
import { routes } from '../../shared/api/routes.ts';
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

describe('the shared host after the fuzzing', () => {
  it('is the same process, alive and answering', async () => {
    expect(hostProcess, 'the shared host process was found before the fuzzing').toBeDefined();
    expect(processAlive(hostProcess as number)).toBe(true);
    expect(hostPid(inject('host').dataDir)).toBe(hostProcess);
    const res = await call('GET', '/workspaces', { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
  });
});
